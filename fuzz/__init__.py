"""tokspec.fuzz: hypothesis strategies and atheris harnesses that pit engines against each other."""
