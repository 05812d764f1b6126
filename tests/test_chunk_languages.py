"""Chunking of the languages added after the first six, over their real grammars: symbols,
kinds, attached comments, imports and calls; and their test-file conventions."""

from __future__ import annotations

import textwrap

import pytest

from code_evidence.api import Chunk
from code_evidence.config import IndexConfig
from code_evidence.filekinds import file_flags
from code_evidence.index.chunk import chunk_file, detect_language


def chunks(path: str, text: str) -> list[Chunk]:
    return chunk_file(path, textwrap.dedent(text).lstrip("\n"), IndexConfig())


def shape(found: list[Chunk]) -> list[tuple[int, int, str, str]]:
    return [(c.start, c.end, c.kind, c.symbol) for c in found]


def by_symbol(found: list[Chunk], symbol: str, kind: str | None = None) -> Chunk:
    (one,) = [c for c in found if c.symbol == symbol and (kind is None or c.kind == kind)]
    return one


def test_c_header_guard_prototypes_and_typedefs() -> None:
    found = chunks(
        "include/cache.h",
        """
        #ifndef CACHE_H
        #define CACHE_H
        #include <stddef.h>
        #include "util/hash.h"

        /* Entry of the cache. */
        typedef struct cache_entry {
            char *key;
        } cache_entry;

        /** Look up a key; NULL when missing. */
        void *cache_get(struct cache *c, const char *key);
        void (*on_evict)(void *);
        #define MAX(a, b) ((a) > (b) ? (a) : (b))
        static inline int cache_hits(const struct cache *c) { return count(c); }
        #endif
        """,
    )
    assert shape(found) == [
        (1, 4, "module", ""),
        (6, 9, "struct", "cache_entry"),
        (11, 12, "declaration", "cache_get"),  # the comment goes with its prototype
        (13, 13, "module", ""),  # a function pointer variable is not a prototype
        (14, 14, "macro", "MAX"),
        (15, 15, "function", "cache_hits"),
    ]
    assert found[0].imports == ("util/hash.h",)  # system includes are not recorded
    assert by_symbol(found, "cache_hits").calls == ("count",)
    assert {c.language for c in found} == {"c"}


def test_cpp_namespaces_classes_and_out_of_class_methods() -> None:
    found = chunks(
        "src/pool.cpp",
        """
        #include "net/pool.hpp"
        namespace net {
        /// A connection pool.
        class Pool {
         public:
          Pool(int size);
          Conn* acquire(int timeout) { return wait_for(timeout); }
         private:
          int size_;
        };
        Conn* Pool::grow(int n) { auto c = new Conn(n); c->open(); return make<Conn>(n); }
        namespace detail { template <typename T> T clamp(T v) { return std::max(v, T{}); } }
        }  // namespace net
        extern "C" { int c_api(void); }
        """,
    )
    assert shape(found) == [
        (1, 1, "module", ""),
        (3, 5, "class", "net.Pool"),
        (6, 6, "declaration", "net.Pool.Pool"),
        (7, 7, "method", "net.Pool.acquire"),
        (8, 9, "class", "net.Pool"),
        (11, 11, "method", "net.Pool.grow"),
        (12, 12, "function", "net.detail.clamp"),
        (13, 13, "module", ""),
        (14, 14, "declaration", "c_api"),
    ]
    assert by_symbol(found, "net.Pool.grow").calls == ("Conn", "open", "make")
    assert by_symbol(found, "net.detail.clamp").calls == ("max",)


def test_cpp_macros_that_stand_for_syntax() -> None:
    """A bare macro line (a namespace opened by a macro, an attribute macro) is read as what it
    stands for: before, the namespace under nlohmann's was one function named ``namespace``."""
    found = chunks(
        "include/json/from_json.hpp",
        """
        NLOHMANN_JSON_NAMESPACE_BEGIN
        namespace detail
        {
        template<typename J>
        inline void from_json(const J& j, bool& b)
        {
            b = j.get_bool();
        }
        JSON_HEDLEY_NON_NULL(3)
        inline void to_bool(const char* s) { parse(s); }
        }  // namespace detail
        NLOHMANN_JSON_NAMESPACE_END
        """,
    )
    assert [(kind, symbol) for _, _, kind, symbol in shape(found) if kind != "module"] == [
        ("function", "detail.from_json"),
        ("function", "detail.to_bool"),
    ]
    toml = chunks(
        "include/toml/parser.inl",
        """
        TOML_IMPL_NAMESPACE_START
        {
            TOML_NODISCARD
            bool parse_key(const char* s) { return s != nullptr; }
        }
        TOML_IMPL_NAMESPACE_END;
        """,
    )
    assert by_symbol(toml, "parse_key").kind == "function"


def test_h_header_is_cpp_when_it_reads_as_cpp() -> None:
    assert detect_language("a.h") == "c"
    assert detect_language("a.h", "int f(void);\n") == "c"
    assert detect_language("a.h", "namespace x {\nint f();\n}\n") == "cpp"
    assert detect_language("a.h", "#include <vector>\n") == "cpp"
    found = chunks("include/shape.h", "class Shape {\n public:\n  double area() const;\n};\n")
    assert [(c.kind, c.symbol, c.language) for c in found][1] == (
        "declaration",
        "Shape.area",
        "cpp",
    )


def test_csharp_types_methods_usings_and_namespaces() -> None:
    found = chunks(
        "src/Billing/InvoiceService.cs",
        """
        using System;
        using Acme.Billing.Models;
        using static System.Math;
        using Money = Acme.Core.Money;
        namespace Acme.Billing
        {
            /// <summary>Computes invoices.</summary>
            public class InvoiceService
            {
                private readonly IRepo repo;
                public InvoiceService(IRepo repo) { this.repo = repo; }
                public decimal Total(Order o) => o.Lines.Sum(l => l.Price);
                public void Save() { repo.Store(new Invoice()); Run<int>(); }
            }
            public interface IRepo { void Store(Invoice i); }
        }
        """,
    )
    assert shape(found) == [
        (1, 4, "module", ""),
        (7, 10, "class", "InvoiceService"),
        (11, 11, "method", "InvoiceService.InvoiceService"),
        (12, 12, "method", "InvoiceService.Total"),
        (13, 13, "method", "InvoiceService.Save"),
        (15, 15, "interface", "IRepo"),
    ]
    assert found[0].imports == (
        "System",
        "Acme.Billing.Models",
        "System.Math",
        "Acme.Core.Money",
        "package Acme.Billing",
    )
    assert by_symbol(found, "InvoiceService.Save").calls == ("Store", "Invoice", "Run")


def test_csharp_and_c_conditional_blocks() -> None:
    """A conditional block that holds definitions is walked as if they stood where it stands:
    Newtonsoft.Json wraps whole files in ``#if !(NETFX_CORE || PORTABLE)``, and its classes and
    methods were one unnamed window; the ``#if`` line opens the first chunk inside. A
    ``#region`` heads what follows, as a comment heading does. A conditional block with no
    definition is code like the code around it (cJSON's ``#ifdef true / #undef true``), not a
    chunk of a line or two."""
    found = chunks(
        "Src/Converters/BinaryConverter.cs",
        """
        #if !(NETFX_CORE || PORTABLE)
        using System;
        namespace Newtonsoft.Json.Converters
        {
            public class BinaryConverter : JsonConverter
            {
        #if !NET20
                private const string BinaryTypeName = "System.Data.Linq.Binary";
        #endif
                public override void WriteJson(JsonWriter writer) { }

                #region Reading
                public override object ReadJson(JsonReader reader) { return null; }
                #endregion
            }
        }
        #endif
        """,
    )
    assert shape(found) == [
        (1, 2, "module", ""),
        (5, 9, "class", "BinaryConverter"),
        (10, 10, "method", "BinaryConverter.WriteJson"),
        (12, 13, "method", "BinaryConverter.ReadJson"),
        (14, 14, "class", "BinaryConverter"),
    ]
    found = chunks(
        "cJSON.c",
        """
        #include <string.h>

        #ifdef true
        #undef true
        #endif
        #define true ((cJSON_bool)1)

        int cJSON_Version(void) { return 1; }
        """,
    )
    assert shape(found) == [(1, 6, "module", ""), (8, 8, "function", "cJSON_Version")]


def test_ruby_modules_classes_and_requires() -> None:
    found = chunks(
        "lib/billing/invoice.rb",
        """
        require "json"
        require_relative "../money"
        module Billing
          # An invoice.
          class Invoice < Base
            attr_reader :lines
            # Unpaid and late?
            def overdue?(today)
              balance.positive? && Tax::Rate.lookup(today)
            end
            def self.build(row) = new(row)
            class << self
              def parse(s)
                JSON.parse(s)
              end
            end
          end
        end
        def helper; Invoice.new(1); end
        """,
    )
    assert shape(found) == [
        (1, 2, "module", ""),
        (3, 3, "module", "Billing"),
        (4, 6, "class", "Billing.Invoice"),
        (7, 10, "method", "Billing.Invoice.overdue?"),
        (11, 11, "method", "Billing.Invoice.build"),
        (13, 15, "method", "Billing.Invoice.parse"),
        (19, 19, "function", "helper"),
    ]
    assert found[0].imports == ("json", "./../money")
    assert by_symbol(found, "Billing.Invoice.overdue?").calls == ("positive?", "lookup")
    assert by_symbol(found, "helper").calls == ("Invoice",)


def test_php_classes_uses_includes_and_namespace() -> None:
    found = chunks(
        "src/Billing/InvoiceService.php",
        """
        <?php
        namespace App\\Billing;

        use App\\Models\\{Order, Line as L};
        use function App\\Support\\format_price;
        require_once __DIR__ . '/helpers.php';

        /** Computes invoices. */
        final class InvoiceService extends Base
        {
            public function total(Order $o): float { return $this->sum($o) + Tax::rate(); }
            abstract protected function x();
        }
        function make(): InvoiceService { return new InvoiceService(); }
        """,
    )
    assert shape(found) == [
        (1, 6, "module", ""),
        (8, 10, "class", "InvoiceService"),
        (11, 11, "method", "InvoiceService.total"),
        (12, 12, "class", "InvoiceService"),
        (14, 14, "function", "make"),
    ]
    assert found[0].imports == (
        "package App\\Billing",
        "App\\Models\\Order",
        "App\\Models\\Line",
        "App\\Support\\",
        "./helpers.php",
    )
    assert by_symbol(found, "InvoiceService.total").calls == ("sum", "rate")
    assert by_symbol(found, "make").calls == ("InvoiceService",)


def test_kotlin_objects_companions_and_extensions() -> None:
    found = chunks(
        "app/src/main/kotlin/com/acme/Billing.kt",
        """
        package com.acme.billing

        import com.acme.model.Order
        import com.acme.util.*

        /** Computes invoices. */
        class InvoiceService(private val repo: Repo) {
            fun total(o: Order): Double = o.lines.sumOf { it.price } + tax(o)

            companion object {
                fun create(): InvoiceService = InvoiceService(Repo())
            }
        }

        interface Svc {
            fun total(o: Order): Double
        }

        fun Order.discounted(): Order = copy()
        """,
    )
    assert shape(found) == [
        (1, 4, "module", ""),
        (6, 7, "class", "InvoiceService"),
        (8, 8, "method", "InvoiceService.total"),
        (10, 10, "object", "InvoiceService.Companion"),
        (11, 11, "method", "InvoiceService.Companion.create"),
        (15, 17, "interface", "Svc"),
        (19, 19, "method", "Order.discounted"),
    ]
    assert found[0].imports == (
        "package com.acme.billing",
        "com.acme.model.Order",
        "com.acme.util.*",
    )
    assert by_symbol(found, "InvoiceService.total").calls == ("sumOf", "tax")


def test_swift_types_extensions_and_imports() -> None:
    found = chunks(
        "Sources/Billing/Invoice.swift",
        """
        import Foundation
        @testable import Money

        /// An invoice.
        struct Invoice {
            let lines: [Line]

            init(lines: [Line]) {
                self.lines = lines
            }

            func total() -> Double {
                return lines.map { $0.price }.reduce(0, +)
            }
        }

        extension Double {
            func rounded2() -> Double { (self * 100).rounded() / 100 }
        }

        protocol Billable {
            func total() -> Double
        }
        """,
    )
    assert shape(found) == [
        (1, 2, "module", ""),
        (4, 6, "struct", "Invoice"),
        (8, 10, "method", "Invoice.init"),
        (12, 14, "method", "Invoice.total"),
        (17, 17, "extension", "Double"),
        (18, 18, "method", "Double.rounded2"),
        (21, 23, "protocol", "Billable"),
    ]
    assert found[0].imports == ("Foundation", "Money")


def test_scala_objects_traits_extensions_and_packages() -> None:
    found = chunks(
        "src/main/scala/com/acme/Pricing.scala",
        """
        package com.acme
        package pricing

        import com.acme.model.{Order, Line => L}
        import com.acme.util._

        /** Chooses discounts. */
        object DiscountEngine {
          def best(o: Order): BigDecimal = o.coupons.map(_.value).max
        }

        trait Coupon {
          def value: BigDecimal
        }

        extension (o: Order) def discounted: Order = o.copy()
        """,
    )
    assert shape(found) == [
        (1, 5, "module", ""),
        (7, 8, "object", "DiscountEngine"),
        (9, 9, "method", "DiscountEngine.best"),
        (12, 14, "trait", "Coupon"),
        (16, 16, "extension", "Order"),
    ]
    assert found[0].imports == (
        "package com.acme.pricing",
        "com.acme.model.Order",
        "com.acme.model.Line",
        "com.acme.util.*",
    )
    assert by_symbol(found, "DiscountEngine.best").calls == ("map",)


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("src/a.c", "c"),
        ("src/a.cc", "cpp"),
        ("include/a.hpp", "cpp"),
        ("include/toml++/impl/parser.inl", "cpp"),
        ("include/c++/12/bits/vector.tcc", "cpp"),
        ("src/A.cs", "csharp"),
        ("lib/a.rb", "ruby"),
        ("Rakefile.rake", "ruby"),
        ("src/A.php", "php"),
        ("src/A.kt", "kotlin"),
        ("build.gradle.kts", "kotlin"),
        ("Sources/A.swift", "swift"),
        ("src/A.scala", "scala"),
    ],
)
def test_extensions(path: str, language: str) -> None:
    assert detect_language(path) == language


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("spec/models/user_spec.rb", True),
        ("lib/cart_test.rb", True),
        ("app/models/cart.rb", False),
        ("tests/Unit/InvoiceTest.php", True),
        ("src/Invoice.php", False),
        ("Acme.Billing.Tests/InvoiceServiceTests.cs", True),
        ("src/Acme.Billing/Invoice.cs", False),
        ("src/Contest.cs", False),
        ("app/src/androidTest/java/com/acme/B.kt", True),
        ("app/src/main/kotlin/com/acme/B.kt", False),
        ("Tests/BillingTests/InvoiceTests.swift", True),
        ("BillingUITests/Launch.swift", True),
        ("Sources/Billing/Invoice.swift", False),
        ("src/test/scala/a/BSpec.scala", True),
        ("src/main/scala/a/B.scala", False),
        ("src/cache_test.cc", True),
        ("src/pool_unittest.cc", True),
        ("src/latest.cpp", False),
    ],
)
def test_test_conventions(path: str, is_test: bool) -> None:
    assert file_flags(path, "")[0] is is_test
