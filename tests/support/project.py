"""The shop project the tests index (a few Python modules, a TypeScript file, a test, an
ignored build folder), and git for making it a repository."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

PROJECT: dict[str, str] = {
    "src/shop/__init__.py": '"""A tiny shop."""\nfrom .cart import Cart\n',
    "src/shop/pricing.py": """
        TAX_RATES = {"eu": 0.2, "us": 0.07}


        def discount_for(code: str) -> float:
            \"\"\"Percentage taken off for a voucher code.\"\"\"
            if code.startswith("VIP"):
                return 0.15
            if code == "WELCOME":
                return 0.05
            return 0.0


        def tax_rate(region: str) -> float:
            return TAX_RATES.get(region, 0.0)
        """,
    "src/shop/cart.py": """
        from .pricing import discount_for, tax_rate


        class Cart:
            \"\"\"Items a customer is about to buy.\"\"\"

            def __init__(self, region: str) -> None:
                self.items: list[tuple[str, float]] = []
                self.region = region
                self.code = ""

            def add_item(self, name: str, price: float) -> None:
                self.items.append((name, price))

            def apply_voucher(self, code: str) -> None:
                self.code = code

            def total(self) -> float:
                subtotal = sum(price for _, price in self.items)
                subtotal -= subtotal * discount_for(self.code)
                return subtotal * (1 + tax_rate(self.region))
        """,
    "src/shop/oauth.py": """
        import hmac


        class OAuthStateError(Exception):
            pass


        def check_oauth_state(request_state: str, session_state: str) -> None:
            \"\"\"Reject a login callback whose state does not match the one we sent.\"\"\"
            if not hmac.compare_digest(request_state, session_state):
                raise OAuthStateError("state mismatch")
        """,
    "src/shop/storage.py": """
        import json
        from pathlib import Path


        def save_json(path: Path, data: dict) -> None:
            path.write_text(json.dumps(data, indent=2))


        def load_json(path: Path) -> dict:
            return json.loads(path.read_text())
        """,
    "web/cartClient.ts": """
        export interface CartLine { name: string; price: number }

        export async function fetchCartLines(userId: string): Promise<CartLine[]> {
          const response = await fetch(`/api/cart/${userId}`);
          return (await response.json()) as CartLine[];
        }
        """,
    "tests/test_cart.py": """
        from shop.cart import Cart


        def test_total_with_voucher():
            cart = Cart("eu")
            cart.add_item("book", 10.0)
            cart.apply_voucher("VIP1")
            assert round(cart.total(), 2) == 10.2
        """,
    "README.md": "# Shop\n\nA tiny shop used to test Code Evidence.\n",
    ".gitignore": "build/\n",
    "build/generated_cart.py": "def add_item():\n    pass\n",
}


def write_project(root: Path, files: dict[str, str] = PROJECT) -> None:
    """Write ``files`` (path -> text, dedented) under ``root``."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def write_files(root: Path, files: dict[str, str]) -> None:
    """Write ``files`` (path -> text, verbatim: indentation may be the point) under ``root``."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def git(root: Path, *args: str) -> str:
    """Run git in ``root``; its stripped stdout. Raises on failure."""
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def init_repo(root: Path) -> None:
    """``git init`` on ``main`` with a fixed author and no signing."""
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "test@example.com")
    git(root, "config", "user.name", "Test")
    git(root, "config", "commit.gpgsign", "false")
