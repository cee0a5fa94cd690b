from django.apps import AppConfig


class PoolingConfig(AppConfig):
    name = "pooling"
    verbose_name = "Campaigns, runs and pools"

    def ready(self) -> None:
        # Every workbench process reads runs with Arrow: see arrow_memory.
        from pooling.arrow_memory import use_system_allocator

        use_system_allocator()
