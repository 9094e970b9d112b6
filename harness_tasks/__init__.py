"""G2M for lm-evaluation-harness: the task folder, the cascading parser, the metrics and two reference models."""

from pathlib import Path

TASK_DIR = Path(__file__).resolve().parent / "tasks"

#: How a task's text marks where the image goes; lm-eval's multimodal backends replace it with the model's own token.
IMAGE_PLACEHOLDER = "<image>"
