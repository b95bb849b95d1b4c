"""`python -m schemas`: rewrite the JSON Schema files from the models."""

from schemas.export import write_all

if __name__ == "__main__":
    for path in write_all():
        print(f"wrote {path}")
