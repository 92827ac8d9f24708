from csp.constants import UNSAFE_INLINE
from csp.decorators import csp_update
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import HttpResponseRedirect
from django.templatetags.static import static
from django.urls import include, path
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerSplitView

from raterapp.admin_permissions import AdminRoleLoginForm, admin_site_has_permission
from raterapp.api.schema_view import ApiSchemaView
from raterapp.services.accounts.login_limits import LockoutAuthenticationForm
from raterapp.views import rating

# The admin's sign-in explains a lockout as the app's does; the app's admins may use it.
admin.site.login_form = AdminRoleLoginForm
admin.site.has_permission = admin_site_has_permission  # type: ignore[method-assign]  # the one site's, replaced
handler400 = "raterapp.views.errors.bad_request"
handler403 = "raterapp.views.errors.permission_denied"
handler404 = "raterapp.views.errors.page_not_found"
handler500 = "raterapp.views.errors.server_error"

urlpatterns = [
    path("", rating.home, name="home"),
    path("", include("raterapp.views.urls")),
    path(
        "login/",
        auth_views.LoginView.as_view(
            template_name="raterapp/login.html", authentication_form=LockoutAuthenticationForm
        ),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # The one-time link a new rater gets to choose a password (raterapp.services.accounts.raters.rater_create).
    path(
        "accounts/set-password/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(template_name="raterapp/accounts/password_set.html"),
        name="password_reset_confirm",
    ),
    path(
        "accounts/set-password/done/",
        auth_views.PasswordResetCompleteView.as_view(template_name="raterapp/accounts/password_set_done.html"),
        name="password_reset_complete",
    ),
    path("admin/", admin.site.urls),
    path("api/", include("raterapp.api.urls")),
    path("api/schema/", ApiSchemaView.as_view(), name="api-schema"),
    # Swagger UI's set-up script from its own URL (?script), not inline: the page keeps the strict CSP.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    # ReDoc styles itself with inline style elements and searches in a blob: worker; the page holds
    # only the schema of this API.
    path(
        "api/redoc/",
        csp_update({"style-src": [UNSAFE_INLINE], "worker-src": ["blob:"]})(
            SpectacularRedocView.as_view(url_name="api-schema")
        ),
        name="api-redoc",
    ),
    # For pages that name no icon (the Django admin, the API's JSON): the app's own.
    path("favicon.ico", lambda request: HttpResponseRedirect(static("raterapp/favicon.svg")), name="favicon"),
]
