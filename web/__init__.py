"""The edge that wires everything: the `vegas-table` command and (later) the Flask app."""
