"""Hugging Face Space: Name Regularity Bias.  The app lives in tough_ner.spaces; run `python app.py`."""
from tough_ner.spaces import build, launch

demo = build("nrb")

if __name__ == "__main__":
    launch("nrb", from_environment=True)  # GRADIO_SERVER_NAME=0.0.0.0 on a Hub Space
