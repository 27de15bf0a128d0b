from django.urls import path

from . import views

app_name = "annotation"

task = "annotate/<slug:slug>/<slug:criterion>/"

urlpatterns = [
    path(task, views.entry, name="entry"),
    path(task + "start/", views.start, name="start"),
    path(task + "hit/<int:assignment_id>/", views.hit, name="hit"),
    path(task + "finish/", views.finish, name="finish"),
    path(task + "done/", views.done, name="done"),
]
