from django.urls import path

from judging import views

app_name = "judging"
urlpatterns = [
    path("", views.assessor_home, name="assessor_home"),
]
