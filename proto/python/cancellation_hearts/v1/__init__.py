"""Generated protocol code of Cancellation Hearts; do not edit."""
