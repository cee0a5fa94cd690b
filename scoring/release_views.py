"""Organiser pages of a pool's releases: the list and the form that releases the
results (a job for a large pool), each release with its downloads and what changed
since another version, and its withdrawal."""

from __future__ import annotations

import tempfile
from typing import Any

from django.contrib import messages
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from pooling.models import Pool
from pooling.selectors import pool_or_404
from scoring import release_selectors, selectors, services
from scoring.core.analysis.render import run_keys
from scoring.forms import ReleaseForm, WithdrawForm
from scoring.models import Release
from workbench.http import attachment, download_name
from workbench.roles import organiser_required


def _release_or_404(pool: Pool, version: int) -> Release:
    release = release_selectors.release_or_none(pool, version)
    if release is None:
        raise Http404(f"pool {pool.pk} has no release {version}")
    return release


def _list_page(
    request: HttpRequest, pool: Pool, form: ReleaseForm, *, error: str = "", status: int = 200
) -> HttpResponse:
    context = {
        "pool": pool,
        "campaign": pool.campaign,
        "releases": list(release_selectors.pool_releases(pool).order_by("-version")),
        "form": form,
        "error": error,
        "in_request": selectors.scores_in_request(pool),
    }
    return render(request, "scoring/pool_releases.html", context, status=status)


@organiser_required
@require_http_methods(["GET", "POST"])
def pool_releases(request: HttpRequest, pool_id: int) -> HttpResponse:
    """The pool's releases, newest first, and the form that makes the next one."""
    pool = pool_or_404(pool_id)
    if request.method != "POST":
        return _list_page(request, pool, ReleaseForm(initial={"measure": "map"}))
    form = ReleaseForm(request.POST)
    if not form.is_valid():
        return _list_page(request, pool, form, error=form.error_text(), status=400)
    data = form.cleaned_data
    try:
        made = services.release_start(
            pool=pool,
            measure=data["measure"],
            measures=data["measures"],
            options=form.leaderboard_options(),
            labels=data["labels"],
            machine=data["machine"] or None,
            reason=data["reason"],
            released_by=request.user,
        )
    except selectors.ScoringError as error:
        return _list_page(request, pool, form, error=f"Not released: {error}.", status=400)
    if not isinstance(made, Release):
        return redirect("job_detail", job_id=made.pk)
    messages.success(request, f"Release {made.version} made: the teams see it.")
    return redirect("scoring:release_detail", pool_id=pool.pk, version=made.version)


@organiser_required
def release_detail(request: HttpRequest, pool_id: int, version: int) -> HttpResponse:
    """A release as it was made, its downloads, and what changed from another
    version (`?from=N`, by default the one before)."""
    pool = pool_or_404(pool_id)
    release = _release_or_404(pool, version)
    others = [r for r in release_selectors.pool_releases(pool) if r.pk != release.pk]
    context: dict[str, Any] = {
        "pool": pool,
        "campaign": pool.campaign,
        "release": release,
        "others": others,
        "runs": list(release.runs.all()),
        "withdraw_form": WithdrawForm(),
    }
    board = release_selectors.release_leaderboard(release)
    keys = run_keys(len(board.runs))
    key_of = {row.run: key for row, key in zip(board.runs, keys, strict=True)}
    beaten = board.beaten(board.options.tests[0]) if board.options.tests else {}
    teams = {item.tag: item.team_name for item in context["runs"]}
    context |= {
        "board": board,
        "rows": [
            {
                "rank": rank,
                "key": key_of[row.run],
                "row": row,
                "team": teams.get(row.run, ""),
                "beats": "".join(key_of[run] for run in beaten.get(row.run, [])),
            }
            for rank, row in enumerate(board.runs, start=1)
        ],
        "files": sorted(release.files.items()),
    }
    measures = list(dict.fromkeys(n for item in context["runs"] for n in item.means))
    context["measures"] = measures
    context["run_rows"] = [
        (item, [_value(item.means.get(m)) for m in measures]) for item in context["runs"]
    ]
    earlier = [r for r in others if r.version < release.version]
    chosen = request.GET.get("from")
    base = next((r for r in others if str(r.version) == chosen), None)
    if chosen and base is None:
        context["compare_error"] = f"Pool {pool.pk} has no other release {chosen}."
    base = base or (earlier[-1] if earlier and not chosen else None)
    if base is not None:
        old, new = (base, release) if base.version < release.version else (release, base)
        try:
            comparison = release_selectors.release_comparison(old, new)
        except release_selectors.ReleaseError as error:
            context["compare_error"] = str(error)
        else:
            labels = comparison.labels
            ranked_by = comparison.new.leaderboard["measure"]
            context |= {
                "comparison": comparison,
                "board_moves": [c for c in comparison.scores if c.measure == ranked_by],
                "other_moves": [c for c in comparison.scores if c.measure != ranked_by],
                "compared_with": base.version,
                "label_rows": list(labels.head(LABELS_SHOWN).itertuples(index=False)),
                "label_rows_more": max(0, len(labels) - LABELS_SHOWN),
            }
    return render(request, "scoring/release_detail.html", context)


LABELS_SHOWN = 500  # label changes listed on the page; the API lists every one


def _value(value: float | None) -> str:
    """As trec_eval prints it (4 decimals), as on the scores page."""
    return "" if value is None else f"{value:.4f}"


@organiser_required
@require_POST
def release_withdraw(request: HttpRequest, pool_id: int, version: int) -> HttpResponse:
    pool = pool_or_404(pool_id)
    release = _release_or_404(pool, version)
    form = WithdrawForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Not withdrawn: say why.")
    else:
        try:
            services.release_withdraw(
                release=release, reason=form.cleaned_data["reason"], withdrawn_by=request.user
            )
        except release_selectors.ReleaseError as error:
            messages.error(request, f"Not withdrawn: {error}.")
        else:
            messages.success(request, f"Release {version} withdrawn: the teams no longer see it.")
    return redirect("scoring:release_detail", pool_id=pool.pk, version=version)


def bundle_response(release: Release) -> FileResponse:
    """The release's zip as a download, written to a temporary file first (a bundle
    holds every run file); ReleaseError if a file is not the one released."""
    file = tempfile.TemporaryFile()  # noqa: SIM115 (FileResponse closes it once sent)
    try:
        release_selectors.release_bundle(release, file)
    except BaseException:
        file.close()
        raise
    file.seek(0)
    name = download_name(release_selectors.bundle_name(release))
    return FileResponse(file, as_attachment=True, filename=name, content_type="application/zip")


@organiser_required
def release_bundle(request: HttpRequest, pool_id: int, version: int) -> HttpResponse:
    release = _release_or_404(pool_or_404(pool_id), version)
    try:
        return bundle_response(release)
    except release_selectors.ReleaseError as error:
        return HttpResponse(f"Cannot bundle: {error}\n", status=409, content_type="text/plain")


@organiser_required
def release_file(request: HttpRequest, pool_id: int, version: int, name: str) -> HttpResponse:
    pool = pool_or_404(pool_id)
    release = _release_or_404(pool, version)
    if name not in release.files:
        raise Http404(f"release {version} has no file {name!r}")
    try:
        data = release_selectors.release_file(release, name)
    except release_selectors.ReleaseError as error:
        return HttpResponse(f"Cannot read it: {error}\n", status=409, content_type="text/plain")
    name_as = f"{pool.campaign.slug}-pool{pool.pk}-release{version}-{name}"
    return attachment(data, name_as, "text/plain; charset=utf-8")
