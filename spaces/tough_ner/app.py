"""Hugging Face Space: tough-ner.  The app lives in tough_ner.spaces; run `python app.py`."""
from tough_ner.spaces import build, launch

demo = build("all")

if __name__ == "__main__":
    launch("all", from_environment=True)  # GRADIO_SERVER_NAME=0.0.0.0 on a Hub Space
