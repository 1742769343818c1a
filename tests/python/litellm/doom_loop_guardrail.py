# LiteLLM loads a guardrail from a file beside its config: this one only
# re-exports the package's guardrail.
from doom_loop.litellm import DoomLoopGuardrail  # noqa: F401
