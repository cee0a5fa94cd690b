"""Assessor pages."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


@login_required
def assessor_home(request: HttpRequest) -> HttpResponse:
    return render(request, "judging/assessor_home.html", {})
