from django import forms
from django.contrib import admin, messages
from django.core.exceptions import BadRequest, PermissionDenied
from django.http import HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html

from annotation.admin_base import HTTPS_URL_FIELDS, CampaignObjectAdmin
from annotation.permissions import may
from annotation.prolific import ProlificError

from . import bonuses
from .models import (
    ApiToken,
    BonusBatch,
    BonusPayment,
    BonusRule,
    ProlificEvent,
    ProlificHook,
    WebhookDelivery,
    WebhookEndpoint,
)
from .tokens import TokenEnded, rotate_token


@admin.register(ApiToken)
class ApiTokenAdmin(CampaignObjectAdmin):
    # A token is its maker's own key, which acts with their permissions (api/access.py):
    # making one asks to view campaigns, not to change them.
    edit_needs = "view"
    list_display = [
        "name",
        "hint",
        "user",
        "level",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
    ]
    list_filter = ["level"]
    search_fields = ["name", "user__username"]
    filter_horizontal = ["campaigns"]
    readonly_fields = ["hint", "created_at", "last_used_at", "expires_at", "revoked_at"]
    actions = ["revoke", "rotate"]

    def get_queryset(self, request):
        tokens = super().get_queryset(request).select_related("user")
        # Staff see their own tokens; a superuser sees everyone's.
        return tokens if request.user.is_superuser else tokens.filter(user=request.user)

    def get_fields(self, request, obj=None):
        fields = ["name", "campaigns", "level", *self.readonly_fields]
        return ["user", *fields] if request.user.is_superuser else fields

    def save_model(self, request, obj, form, change):
        if not change:
            # Only a superuser gives a token to someone else: a token acts with its user's
            # permissions, so making one for a stronger account would be a way up.
            if not request.user.is_superuser or obj.user_id is None:
                obj.user = request.user
            request._new_api_secret = obj.new_secret()
        super().save_model(request, obj, form, change)

    def response_add(self, request, obj, post_url_continue=None):
        return self._secret_page(request, obj, request._new_api_secret)

    def _secret_page(self, request, token, secret, replaced=None):
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "API token created",
            "token": token,
            "secret": secret,
            "replaced": replaced,
            "campaigns": [c.slug for c in token.campaigns.all()],
        }
        # The admin's views are never cached: the page with the secret is not kept either.
        return TemplateResponse(request, "admin/api/token_created.html", context)

    @admin.action(
        description="Rotate the selected token (a new secret; the old one ends)",
        permissions=["change"],
    )
    def rotate(self, request, queryset):
        """One token at a time: its new secret is shown once, on the page this returns."""
        if queryset.count() != 1:
            self.message_user(request, "Rotate one token at a time.", messages.ERROR)
            return None
        old = queryset.get()
        try:
            new, secret = rotate_token(old)
        except TokenEnded as error:
            self.message_user(request, str(error), messages.ERROR)
            return None
        return self._secret_page(request, new, secret, replaced=old)

    @admin.action(description="Revoke the selected tokens", permissions=["change"])
    def revoke(self, request, queryset):
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"{count} tokens revoked.", messages.SUCCESS)


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(CampaignObjectAdmin):
    """The secret is made with the endpoint and shown once, on the page after it is added;
    to replace a lost one, delete the endpoint and add it again."""

    list_display = ["url", "campaign", "is_active", "created_at"]
    list_filter = ["is_active"]
    search_fields = ["url", "campaign__slug"]
    fields = ["campaign", "url", "events", "is_active"]
    list_select_related = ["campaign"]
    formfield_overrides = HTTPS_URL_FIELDS

    def response_add(self, request, obj, post_url_continue=None):
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "Webhook endpoint added",
            "endpoint": obj,
            "secret": obj.secret,
        }
        # The admin's views are never cached: the page with the secret is not kept either.
        return TemplateResponse(request, "admin/api/webhook_created.html", context)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(CampaignObjectAdmin):
    """The record of what was sent and answered; made by the sweep, never by hand."""

    list_display = ["event", "endpoint", "status", "attempts", "response_code", "created_at"]
    list_filter = ["status", "event"]
    list_select_related = ["endpoint__campaign"]
    readonly_fields = [f.name for f in WebhookDelivery._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class ProlificHookForm(forms.ModelForm):
    """The hook's secret is written, never shown: on a hook's page the field is empty, and
    left empty it keeps the secret as it is."""

    new_secret = forms.CharField(
        label="Secret",
        required=False,
        max_length=200,
        strip=True,
        widget=forms.PasswordInput(render_value=False),
        help_text=ProlificHook._meta.get_field("secret").help_text
        + " Kept hidden: type it again to replace it.",
    )

    class Meta:
        model = ProlificHook
        fields = ["campaign"]

    def clean_new_secret(self) -> str:
        secret = self.cleaned_data["new_secret"]
        if not secret and not self.instance.secret:
            raise forms.ValidationError("Give the workspace's hook secret.")
        return secret

    def save(self, commit=True):
        if self.cleaned_data["new_secret"]:
            self.instance.secret = self.cleaned_data["new_secret"]
        return super().save(commit)


@admin.register(ProlificHook)
class ProlificHookAdmin(CampaignObjectAdmin):
    list_display = ["campaign", "created_at"]
    list_select_related = ["campaign"]
    form = ProlificHookForm
    fields = ["campaign", "new_secret"]


@admin.register(ProlificEvent)
class ProlificEventAdmin(CampaignObjectAdmin):
    """What Prolific sent and what was done: written by the endpoint, read here."""

    list_display = ["event_type", "status", "participant_id", "outcome", "received_at"]
    list_filter = ["status"]
    readonly_fields = [f.name for f in ProlificEvent._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(BonusRule)
class BonusRuleAdmin(CampaignObjectAdmin):
    list_display = ["campaign", "per_counted_hit", "for_passing_checks", "review_link"]
    list_select_related = ["campaign"]

    @admin.display(description="bonuses")
    def review_link(self, obj):
        url = reverse("admin:api_bonusrule_review", args=[obj.campaign_id])
        return format_html('<a href="{}">Review and pay</a>', url)

    def get_urls(self):
        review = self.admin_site.admin_view(self.review_view)
        return [
            path("campaign/<int:campaign_id>/review/", review, name="api_bonusrule_review"),
            *super().get_urls(),
        ]

    def review_view(self, request, campaign_id: int):
        """The bonuses the verdicts call for, to approve and pay (POST), and the batches."""
        if not (self.has_change_permission(request) and may(request.user, "change")):
            raise PermissionDenied
        rules = BonusRule.objects.select_related("campaign")
        rule = get_object_or_404(rules, campaign_id=campaign_id)
        campaign = rule.campaign
        if request.method == "POST":
            form = BonusActionForm(request.POST)
            if not form.is_valid():
                raise BadRequest("Invalid request.")
            self._act(request, campaign, form.cleaned_data)
            return redirect(request.path)
        if request.method != "GET":
            return HttpResponseNotAllowed(["GET", "POST"])
        payments = bonuses.propose(campaign)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"Bonuses of {campaign}",
            "campaign": campaign,
            "rule": rule,
            "payments": payments,
            "totals": bonuses.summary(payments),
            "batches": BonusBatch.objects.filter(campaign=campaign),
        }
        return TemplateResponse(request, "admin/api/bonus_review.html", context)

    def _act(self, request, campaign, data) -> None:
        try:
            if data["action"] == "pay":
                proposed = BonusPayment.objects.filter(campaign=campaign, state="proposed")
                bonuses.approve(campaign, proposed.values_list("pk", flat=True))
                batch = bonuses.pay(campaign, request.user)
                text = f"Batch {batch.pk}: {batch.get_state_display()}." if batch else None
                self.message_user(request, text or "Nothing approved to pay.", messages.INFO)
            else:
                batch = get_object_or_404(BonusBatch, pk=data["batch"], campaign=campaign)
                bonuses.resume(batch)
                self.message_user(request, f"Batch {batch.pk}: {batch.get_state_display()}.")
        except ProlificError as error:
            self.message_user(request, f"Prolific: {error}", messages.ERROR)


class BonusActionForm(forms.Form):
    action = forms.ChoiceField(choices=[("pay", "pay"), ("resume", "resume")])
    batch = forms.IntegerField(required=False, min_value=1)
