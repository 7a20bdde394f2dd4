"""The collaborative-filtering task-level study (Zhong, Yi & Ye)."""
