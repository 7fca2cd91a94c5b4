"""Hugging Face Space: Tough Mentions Recall (tough-ner).  `python app.py` imports the tough_ner package beside
this file (the script's folder comes first on sys.path) and listens where GRADIO_SERVER_NAME says
(0.0.0.0 unless set, as a Space needs)."""
import os

from tough_ner.spaces import build, launch

STATS = None  # built-in training statistics (tough-ner space --export --stats)
HERE = os.path.dirname(os.path.abspath(__file__))
demo = build("tmr", stats=STATS and os.path.join(HERE, STATS))

if __name__ == "__main__":
    launch(app=demo, from_environment=True)
