from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from workbench.roles import is_organiser


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Organisers land on their campaigns, assessors on their assignments."""
    if is_organiser(request.user):
        return redirect("pooling:campaign_list")
    return redirect("judging:assessor_home")
