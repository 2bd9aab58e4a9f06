"""The Slides menu: views saved as slides, shown in turn, exported as PNG or PDF."""
