app_name = "ranking"

urlpatterns: list = []
