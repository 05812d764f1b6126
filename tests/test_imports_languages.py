"""Import resolution of the languages added after the first six (``include_paths.py``,
``namespaces.py``): over path sets shaped like real projects, with the packages files declare
and the manifests (composer.json, Package.swift) the indexer hands in."""

from __future__ import annotations

import json

from code_evidence.index.imports import ImportResolver


def test_c_includes_beside_root_and_by_suffix() -> None:
    paths = {
        "include/ringbuf.h",
        "src/ringbuf.c",
        "src/logger.h",
        "src/logger.c",
        "src/net/util.h",
        "lib/util.h",
        "vendorless/other/util.h",
        "config.h",
    }
    r = ImportResolver(paths)
    assert r.resolve("src/logger.c", "c", ["logger.h", "stdio.h"]) == ["src/logger.h"]
    assert r.resolve("src/logger.h", "c", ["../include/ringbuf.h"]) == ["include/ringbuf.h"]
    # Not beside the file nor at the root: an include directory we were not told about.
    assert r.resolve("src/ringbuf.c", "c", ["ringbuf.h", "config.h"]) == [
        "include/ringbuf.h",
        "config.h",
    ]
    # Several files of that name: the nearest to the including file.
    assert r.resolve("src/net/socket.c", "cpp", ["util.h"]) == ["src/net/util.h"]
    assert r.resolve("tools/main.c", "c", ["util.h"]) == ["lib/util.h"]  # else the shallowest
    assert r.resolve("src/main.c", "c", ["/usr/include/x.h", "../../outside.h"]) == []


def test_ruby_require_relative_and_load_path() -> None:
    paths = {
        "lib/billing.rb",
        "lib/billing/invoice.rb",
        "lib/billing/reminder_job.rb",
        "app/models/set.rb",
        "gems/money/lib/money/currency.rb",
        "spec/billing/invoice_spec.rb",
    }
    r = ImportResolver(paths)
    assert r.resolve("lib/billing.rb", "ruby", ["./billing/invoice", "./billing/missing"]) == [
        "lib/billing/invoice.rb"
    ]
    assert r.resolve("lib/billing/reminder_job.rb", "ruby", ["./invoice.rb"]) == [
        "lib/billing/invoice.rb"
    ]
    assert r.resolve("spec/billing/invoice_spec.rb", "ruby", ["billing", "billing/invoice"]) == [
        "lib/billing.rb",
        "lib/billing/invoice.rb",
    ]
    assert r.resolve("lib/billing.rb", "ruby", ["money/currency"]) == [
        "gems/money/lib/money/currency.rb"
    ]
    # A one-word require outside lib/ is a gem or the standard library, not app/models/set.rb.
    assert r.resolve("lib/billing.rb", "ruby", ["set", "json"]) == []


def test_php_psr4_namespaces_and_includes() -> None:
    paths = {
        "composer.json",
        "src/Auth/PasswordResetService.php",
        "src/Auth/TokenRepository.php",
        "src/Mail/Mailer.php",
        "src/Support/helpers.php",
        "src/Support/strings.php",
        "tests/Auth/ResetTest.php",
        "legacy/util.php",
        "modules/billing/Invoice.php",
    }
    composer = {
        "autoload": {"psr-4": {"Acme\\Accounts\\": "src/"}},
        "autoload-dev": {"psr-4": {"Acme\\Accounts\\Tests\\": ["tests/"]}},
    }
    declared = {
        "src/Support/helpers.php": ("package Acme\\Accounts\\Support",),
        "src/Support/strings.php": ("package Acme\\Accounts\\Support",),
        "modules/billing/Invoice.php": ("package Billing",),
    }
    r = ImportResolver(paths, declared, {"composer.json": json.dumps(composer)})
    me = "src/Http/Controller.php"
    assert r.resolve(me, "php", ["Acme\\Accounts\\Auth\\PasswordResetService"]) == [
        "src/Auth/PasswordResetService.php"
    ]
    assert r.resolve(me, "php", ["Acme\\Accounts\\Tests\\Auth\\ResetTest"]) == [
        "tests/Auth/ResetTest.php"
    ]
    # Outside PSR-4: the file named after the class among those declaring its namespace.
    assert r.resolve(me, "php", ["Billing\\Invoice", "PHPUnit\\Framework\\TestCase"]) == [
        "modules/billing/Invoice.php"
    ]
    # use function: the namespace's files.
    assert sorted(r.resolve(me, "php", ["Acme\\Accounts\\Support\\"])) == [
        "src/Support/helpers.php",
        "src/Support/strings.php",
    ]
    assert r.resolve("src/Support/strings.php", "php", ["./helpers.php", "legacy/util.php"]) == [
        "src/Support/helpers.php",
        "legacy/util.php",
    ]
    # A composer.json that is not JSON costs its PSR-4 rules only.
    broken = ImportResolver(paths, declared, {"composer.json": "{ not json"})
    assert broken.resolve(me, "php", ["Acme\\Accounts\\Auth\\TokenRepository"]) == []


def test_csharp_using_namespaces() -> None:
    declared = {
        "src/Models/StockItem.cs": ("package Warehouse.Models",),
        "src/Models/OrderLine.cs": ("package Warehouse.Models",),
        "src/Services/StockService.cs": ("System", "package Warehouse.Services"),
        "src/Services/Math/Rounding.cs": ("package Warehouse.Services.Math",),
    }
    r = ImportResolver(set(declared), declared)
    me = "src/Controllers/OrderController.cs"
    assert sorted(r.resolve(me, "csharp", ["Warehouse.Models", "System.Linq"])) == [
        "src/Models/OrderLine.cs",
        "src/Models/StockItem.cs",
    ]
    # using static / an alias names a type: the file named after it.
    assert r.resolve(me, "csharp", ["Warehouse.Models.StockItem"]) == ["src/Models/StockItem.cs"]
    # What a file declares is never an import of its own.
    assert r.resolve(me, "csharp", ["package Warehouse.Models"]) == []


def test_kotlin_and_scala_packages() -> None:
    declared = {
        "app/src/main/kotlin/net/RetryPolicy.kt": ("package com.acme.notes.net",),
        "app/src/main/kotlin/net/Backoff.kt": ("package com.acme.notes.net",),
        "shop/src/main/scala/com/acme/shop/pricing/DiscountEngine.scala": (
            "package com.acme.shop.pricing",
        ),
        "shop/src/main/scala/com/acme/shop/pricing/Coupon.scala": (
            "package com.acme.shop.pricing",
        ),
        "lib/src/main/java/com/acme/legacy/Ids.java": (),
    }
    r = ImportResolver(set(declared), declared)
    me = "app/src/main/kotlin/sync/NoteUploader.kt"
    # The folder does not spell the package (Kotlin's convention); the declaration decides.
    assert r.resolve(me, "kotlin", ["com.acme.notes.net.RetryPolicy"]) == [
        "app/src/main/kotlin/net/RetryPolicy.kt"
    ]
    # A top-level function: no file is named after it, so the package.
    assert sorted(r.resolve(me, "kotlin", ["com.acme.notes.net.jitter"])) == [
        "app/src/main/kotlin/net/Backoff.kt",
        "app/src/main/kotlin/net/RetryPolicy.kt",
    ]
    # Java files declare nothing here: folders, as for Java.
    assert r.resolve(me, "kotlin", ["com.acme.legacy.Ids", "kotlin.math.min"]) == [
        "lib/src/main/java/com/acme/legacy/Ids.java"
    ]
    checkout = "shop/src/main/scala/com/acme/shop/cart/Checkout.scala"
    assert r.resolve(checkout, "scala", ["com.acme.shop.pricing.DiscountEngine"]) == [
        "shop/src/main/scala/com/acme/shop/pricing/DiscountEngine.scala"
    ]
    assert len(r.resolve(checkout, "scala", ["com.acme.shop.pricing.*"])) == 2


def test_swift_modules_from_package_swift_and_folders() -> None:
    paths = {
        "Package.swift",
        "Sources/WeatherKit/Forecast.swift",
        "Sources/WeatherKit/Parsing/ForecastParser.swift",
        "Sources/WeatherApp/App.swift",
        "Modules/Networking/Client.swift",
        "Tests/WeatherKitTests/ParserTests.swift",
    }
    manifest = """
    let package = Package(
        name: "Weather",
        targets: [
            .target(name: "WeatherKit", dependencies: [.product(name: "Algorithms")]),
            .executableTarget(name: "WeatherApp", dependencies: ["WeatherKit"]),
            .target(
                name: "Net",
                path: "Modules/Networking"
            ),
            .testTarget(name: "WeatherKitTests", dependencies: ["WeatherKit"]),
        ]
    )
    """
    r = ImportResolver(paths, {}, {"Package.swift": manifest})
    me = "Sources/WeatherApp/App.swift"
    assert sorted(r.resolve(me, "swift", ["WeatherKit", "Foundation"])) == [
        "Sources/WeatherKit/Forecast.swift",
        "Sources/WeatherKit/Parsing/ForecastParser.swift",
    ]
    assert r.resolve(me, "swift", ["Net"]) == ["Modules/Networking/Client.swift"]
    # Without a manifest (an Xcode project): the folder named after the module.
    bare = ImportResolver(paths - {"Package.swift"})
    assert bare.resolve(me, "swift", ["Networking"]) == ["Modules/Networking/Client.swift"]
