from typing import Any

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile

from pooling.models import Campaign
from pooling.trec_io import DOCUMENT_FORMATS, TOPIC_FORMATS


class CampaignForm(forms.ModelForm):
    class Meta:
        model = Campaign
        fields = ["name", "slug", "description", "guidelines", "judgment_budget", "label_schema"]
        widgets = {
            "description": forms.Textarea(attrs={"rows": 3}),
            "guidelines": forms.Textarea(attrs={"rows": 5}),
            "label_schema": forms.Textarea(attrs={"rows": 12, "class": "mono"}),
        }


def _check_size(upload: UploadedFile) -> UploadedFile:
    limit = settings.WORKBENCH_MAX_UPLOAD_BYTES
    if upload.size and upload.size > limit:
        raise forms.ValidationError(
            f"{upload.name}: {upload.size:,} bytes is over the upload limit of {limit:,} bytes; "
            "use the import command for files this large."
        )
    return upload


def _format_choices(formats: tuple[str, ...]) -> list[tuple[str, str]]:
    return [("", "detect from the file"), *((f, f.upper()) for f in formats)]


class TopicUploadForm(forms.Form):
    # Empty files reach the reader, which explains what is wrong with them.
    file = forms.FileField(label="Topic file", allow_empty_file=True)
    format = forms.ChoiceField(choices=_format_choices(TOPIC_FORMATS), required=False)

    def clean_file(self) -> UploadedFile:
        return _check_size(self.cleaned_data["file"])


class AnswerUploadForm(forms.Form):
    file = forms.FileField(label="Answers file (topics_efficacy)", allow_empty_file=True)

    def clean_file(self) -> UploadedFile:
        return _check_size(self.cleaned_data["file"])


class DocumentUploadForm(forms.Form):
    file = forms.FileField(label="Collection file", allow_empty_file=True)
    format = forms.ChoiceField(choices=_format_choices(DOCUMENT_FORMATS), required=False)

    def clean_file(self) -> UploadedFile:
        return _check_size(self.cleaned_data["file"])


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    widget = MultipleFileInput

    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile]:
        files = data if isinstance(data, list | tuple) else [data]
        return [_check_size(super(MultipleFileField, self).clean(f, initial)) for f in files]


class RunUploadForm(forms.Form):
    files = MultipleFileField(label="Run files", allow_empty_file=True)
    keep_valid = forms.BooleanField(
        required=False,
        label="Store the valid files even if others are rejected",
    )
