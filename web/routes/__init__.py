"""The app's routes, one APIRouter per area; create_app includes them in this order."""
