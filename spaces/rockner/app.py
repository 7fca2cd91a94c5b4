"""Hugging Face Space: RockNER.  The app lives in tough_ner.spaces; run `python app.py`."""
from tough_ner.spaces import build, launch

demo = build("rockner")

if __name__ == "__main__":
    launch("rockner", from_environment=True)  # GRADIO_SERVER_NAME=0.0.0.0 on a Hub Space
