from django.apps import AppConfig


class ParticipationConfig(AppConfig):
    name = "participation"
    verbose_name = "Participation"
