"""End-to-end recipes: generate -> SFT -> GRPO on an environment, with their evaluations."""
