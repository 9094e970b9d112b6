"""Writing pages: the one Jinja2 environment (autoescape on: a value is text unless the code marks it safe), the
page frame and table templates every page extends, and number and markdown formatting. Imports no other room."""
