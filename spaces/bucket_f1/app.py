"""Hugging Face Space: Bucket F1.  The app lives in tough_ner.spaces; run `python app.py`."""
from tough_ner.spaces import build, launch

demo = build("bucket_f1")

if __name__ == "__main__":
    launch("bucket_f1", from_environment=True)  # GRADIO_SERVER_NAME=0.0.0.0 on a Hub Space
