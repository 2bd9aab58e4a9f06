"""The two-model view: a second model beside the first (explorer/app/controllers/compare.py)."""
