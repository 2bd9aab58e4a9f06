from tests.support.qt import no_leaks, temp_cache, temp_settings, tiny_model, tuned_process

__all__ = ["no_leaks", "temp_cache", "temp_settings", "tiny_model", "tuned_process"]
