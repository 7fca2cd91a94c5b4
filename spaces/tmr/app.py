"""Hugging Face Space: Tough Mentions Recall.  The app lives in tough_ner.spaces; run `python app.py`."""
from tough_ner.spaces import build, launch

demo = build("tmr")

if __name__ == "__main__":
    launch("tmr", from_environment=True)  # GRADIO_SERVER_NAME=0.0.0.0 on a Hub Space
