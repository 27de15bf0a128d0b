from django.urls import path

from . import views

app_name = "annotation"

criterion = "annotate/<slug:slug>/<slug:criterion_name>/"

urlpatterns = [
    path(criterion, views.entry, name="entry"),
    path(criterion + "start/", views.start, name="start"),
    path(criterion + "check/", views.check, name="check"),
    path(criterion + "hit/<int:assignment_id>/", views.hit, name="hit"),
    path(criterion + "finish/", views.finish, name="finish"),
    path(criterion + "done/", views.done, name="done"),
]
