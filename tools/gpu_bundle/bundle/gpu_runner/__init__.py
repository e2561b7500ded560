"""The runner of the GPU check bundle (run.py): python3 and numpy only."""
