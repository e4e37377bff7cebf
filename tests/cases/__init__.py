"""Functions the tests transform; they live in files because cpsgrad reads source."""
