"""The held-out doc-comment questions (``bench/doc_questions.py``) read Java's, PHP's and Ruby's
doc comments the way a reader does: the question is the first sentence as text, gold is the
definition under it, and a comment that documents nothing asks nothing."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from doc_comments import read_docs


def _docs(tmp_path: Path, name: str, text: str) -> list[tuple[str, int, int, int, tuple]]:
    path = tmp_path / "src" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    docs, counts = read_docs(tmp_path)
    assert all(counts[d.sentence] == 1 for d in docs)
    return [(d.sentence, d.start, d.end, d.statements, d.comment) for d in docs]


def test_java_javadoc_reads_html_and_inline_tags_as_text(tmp_path: Path) -> None:
    found = _docs(
        tmp_path,
        "StringUtils.java",
        """
        package org.example;

        /** <p>Operations on {@link java.lang.String} that are {@code null} safe.</p> */
        public class StringUtils {
            /**
             * <p>Checks if a CharSequence is empty (&quot;&quot;) or {@code null}.</p>
             *
             * @param cs  the CharSequence to check
             */
            @Deprecated
            public static boolean isEmpty(final CharSequence cs) {
                int a = 1;
                return cs == null;
            }

            // not a doc comment
            private void helper() {}
        }
        """,
    )
    assert found == [
        ("Operations on java.lang.String that are null safe.", 4, 18, 4, (3, 3)),
        ('Checks if a CharSequence is empty ("") or null.', 10, 14, 2, (5, 9)),
    ]


def test_php_methods_in_a_namespace_and_functions(tmp_path: Path) -> None:
    found = _docs(
        tmp_path,
        "AppendStream.php",
        """
        <?php
        namespace GuzzleHttp\\Psr7;

        final class AppendStream
        {
            /**
             * Add a stream to the AppendStream
             *
             * @param StreamInterface $stream Stream to append.
             */
            public function addStream(StreamInterface $stream): void
            {
                $this->streams[] = $stream;
            }
        }

        /** Build a query string from an array of key value pairs. */
        function build_query(array $params): string { return ''; }
        """,
    )
    assert found == [
        ("Add a stream to the AppendStream", 11, 14, 1, (6, 10)),
        ("Build a query string from an array of key value pairs.", 18, 18, 1, (17, 17)),
    ]


def test_ruby_comment_lines_above_a_method(tmp_path: Path) -> None:
    found = _docs(
        tmp_path,
        "template.rb",
        """
        # frozen_string_literal: true
        module Addressable
          class Template
            ##
            # Creates a new MatchData object.
            # @param uri [Addressable::URI]
            def initialize(uri, template)
              @uri = uri.dup.freeze
              @template = template
            end

            def undocumented
              1
            end
          end
        end
        """,
    )
    assert found == [("Creates a new MatchData object.", 7, 10, 2, (4, 6))]


def test_csharp_summary_inside_a_conditional_block(tmp_path: Path) -> None:
    found = _docs(
        tmp_path,
        "BinaryConverter.cs",
        """
        #if !(NETFX_CORE || PORTABLE)
        namespace Newtonsoft.Json.Converters
        {
            /// <summary>
            /// Converts a <see cref="T:System.Data.Linq.Binary"/> value to and from a base 64
            /// string value.
            /// </summary>
            public class BinaryConverter : JsonConverter
            {
                /// <summary>Reads the <c>JSON</c> representation of the object.</summary>
                /// <param name="reader">The reader.</param>
                public object ReadJson(JsonReader reader) { return null; }
            }
        }
        #endif
        """,
    )
    assert found == [
        (
            "Converts a System.Data.Linq.Binary value to and from a base 64 string value.",
            8,
            13,
            1,
            (4, 7),
        ),
        ("Reads the JSON representation of the object.", 12, 12, 1, (10, 11)),
    ]
