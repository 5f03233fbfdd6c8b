using System;
using System.Collections.Generic;
using System.Text;
using Falconet.Http;
using Microsoft.Extensions.Primitives;
using Shouldly;

namespace Falconet.Generated.Tests;

/// <summary>RequestHeaders as a collection: known, unknown and Content-Length headers through every part of its surface.</summary>
public sealed class RequestHeadersCollectionTests
{
    [Fact]
    public void TryAppend_stores_known_unknown_and_content_length_headers_where_each_can_be_read()
    {
        var headers = new RequestHeaders();

        headers.TryAppend("host"u8, "example.com"u8).ShouldBeTrue();
        headers.TryAppend("X-Trace-Id"u8, "abc"u8).ShouldBeTrue();
        headers.TryAppend("content-length"u8, "42"u8).ShouldBeTrue();

        HeaderAssert.HasCount(headers, 3);
        headers.Host.ToString().ShouldBe("example.com");
        headers["HOST"].ToString().ShouldBe("example.com");
        headers.ContentLength.ShouldBe(42);
        headers["Content-Length"].ToString().ShouldBe("42");
        headers["x-trace-id"].ToString().ShouldBe("abc");
        headers.TryGetValue("X-TRACE-ID", out StringValues unknown).ShouldBeTrue();
        unknown.ToString().ShouldBe("abc");
        headers.TryGetValue("Accept", out StringValues absent).ShouldBeFalse();
        absent.ShouldBe(StringValues.Empty);
    }

    [Fact]
    public void Enumeration_yields_known_headers_in_bit_order_then_content_length_then_unknown_headers()
    {
        var headers = new RequestHeaders();
        headers.Append("X-Custom"u8, "1"u8);
        headers.Append("Content-Length"u8, "7"u8);
        headers.Append("User-Agent"u8, "curl/8.5"u8);
        headers.Append("Host"u8, "localhost"u8);

        var seen = new List<string>();
        foreach (KeyValuePair<string, StringValues> pair in headers)
        {
            seen.Add(pair.Key + "=" + pair.Value);
        }

        seen.ShouldBe(new[] { "Host=localhost", "User-Agent=curl/8.5", "Content-Length=7", "X-Custom=1" });
        headers.Count.ShouldBe(seen.Count);
    }

    [Fact]
    public void Duplicate_headers_are_kept_as_several_values_and_enumerated_once()
    {
        var headers = new RequestHeaders();
        headers.Append("Accept"u8, "text/html"u8);
        headers.Append("ACCEPT"u8, "*/*"u8);
        headers.Append("X-Forwarded-Path"u8, "/a"u8);
        headers.Append("x-forwarded-path"u8, "/b"u8);

        headers.Accept.ToArray().ShouldBe(new[] { "text/html", "*/*" });
        headers["X-Forwarded-Path"].ToArray().ShouldBe(new[] { "/a", "/b" });
        HeaderAssert.HasCount(headers, 2);

        int entries = 0;
        foreach (KeyValuePair<string, StringValues> pair in headers)
        {
            entries++;
            pair.Value.Count.ShouldBe(2);
        }

        entries.ShouldBe(2);
    }

    [Fact]
    public void A_repeated_equal_content_length_is_accepted_once()
    {
        var headers = new RequestHeaders();

        headers.TryAppend("Content-Length"u8, "10"u8).ShouldBeTrue();
        headers.TryAppend("content-length"u8, "10"u8).ShouldBeTrue();

        headers.ContentLength.ShouldBe(10);
        HeaderAssert.HasCount(headers, 1);
    }

    [Theory]
    [InlineData("")]
    [InlineData("abc")]
    [InlineData("-1")]
    [InlineData("+1")]
    [InlineData("1 2")]
    [InlineData(" 5")]
    [InlineData("5,5")]
    [InlineData("0x10")]
    [InlineData("9223372036854775808")]
    [InlineData("99999999999999999999")]
    public void TryAppend_rejects_an_invalid_content_length(string value)
    {
        var headers = new RequestHeaders();

        headers.TryAppend("Content-Length"u8, Encoding.ASCII.GetBytes(value)).ShouldBeFalse();
        headers.ContentLength.ShouldBeNull();
        HeaderAssert.HasCount(headers, 0);
        Should.Throw<FormatException>(() => headers.Append("Content-Length"u8, Encoding.ASCII.GetBytes(value)));
    }

    [Fact]
    public void TryAppend_accepts_the_largest_content_length_and_rejects_a_different_second_one()
    {
        var headers = new RequestHeaders();

        headers.TryAppend("Content-Length"u8, "9223372036854775807"u8).ShouldBeTrue();
        headers.ContentLength.ShouldBe(long.MaxValue);
        headers.TryAppend("Content-Length"u8, "0"u8).ShouldBeFalse();
        headers.ContentLength.ShouldBe(long.MaxValue);
    }

    [Fact]
    public void Remove_deletes_known_unknown_and_content_length_headers_and_reports_whether_they_were_there()
    {
        var headers = new RequestHeaders();
        headers.Append("Cookie"u8, "a=1"u8);
        headers.Append("X-Custom"u8, "1"u8);
        headers.Append("Content-Length"u8, "3"u8);

        headers.Remove("COOKIE").ShouldBeTrue();
        headers.Remove("Cookie").ShouldBeFalse();
        headers.Remove("x-custom").ShouldBeTrue();
        headers.Remove("X-Custom").ShouldBeFalse();
        headers.Remove("Content-Length").ShouldBeTrue();
        headers.Remove("Content-Length").ShouldBeFalse();
        headers.Remove("Never-Added").ShouldBeFalse();

        HeaderAssert.HasCount(headers, 0);
        headers.Cookie.ShouldBe(StringValues.Empty);
        headers.ContentLength.ShouldBeNull();
        headers.ContainsKey("Cookie").ShouldBeFalse();
    }

    [Fact]
    public void Clear_empties_the_collection_so_that_it_can_be_filled_again()
    {
        var headers = new RequestHeaders();
        headers.Append("Host"u8, "a"u8);
        headers.Append("X-Custom"u8, "1"u8);
        headers.Append("Content-Length"u8, "3"u8);

        headers.Clear();

        HeaderAssert.HasCount(headers, 0);
        headers.ShouldBeEmpty();
        headers.Host.ShouldBe(StringValues.Empty);
        headers.ContainsKey("X-Custom").ShouldBeFalse();
        headers.ContentLength.ShouldBeNull();

        headers.Append("host"u8, "b"u8);
        headers.Host.ToString().ShouldBe("b");
        HeaderAssert.HasCount(headers, 1);
    }

    [Fact]
    public void The_indexer_sets_replaces_and_removes_known_unknown_and_content_length_headers()
    {
        var headers = new RequestHeaders();

        headers["content-type"] = "text/plain";
        headers["X-Custom"] = new StringValues(new[] { "1", "2" });
        headers["Content-Length"] = "12";

        headers.ContentType.ToString().ShouldBe("text/plain");
        headers["x-custom"].ToArray().ShouldBe(new[] { "1", "2" });
        headers.ContentLength.ShouldBe(12);
        HeaderAssert.HasCount(headers, 3);

        headers["Content-Type"] = "application/json";
        headers["CONTENT-TYPE"].ToString().ShouldBe("application/json");

        headers["Content-Type"] = StringValues.Empty;
        headers["X-Custom"] = StringValues.Empty;
        headers["Content-Length"] = StringValues.Empty;
        HeaderAssert.HasCount(headers, 0);
        headers["Content-Type"].ShouldBe(StringValues.Empty);
        headers["X-Custom"].ShouldBe(StringValues.Empty);
        headers["Content-Length"].ShouldBe(StringValues.Empty);
        Should.Throw<FormatException>(() => headers["Content-Length"] = "twelve");
    }

    [Fact]
    public void Typed_properties_set_and_clear_their_header()
    {
        var headers = new RequestHeaders { Referer = "https://example.com/", ContentLength = 5 };

        headers["Referer"].ToString().ShouldBe("https://example.com/");
        headers["content-length"].ToString().ShouldBe("5");
        HeaderAssert.HasCount(headers, 2);

        headers.Referer = StringValues.Empty;
        headers.ContentLength = null;
        HeaderAssert.HasCount(headers, 0);
        Should.Throw<ArgumentOutOfRangeException>(() => headers.ContentLength = -1);
    }

    [Fact]
    public void The_dictionary_surface_reports_keys_values_and_copies_every_header()
    {
        var headers = new RequestHeaders();
        headers.Append("Host"u8, "h"u8);
        headers.Append("Content-Length"u8, "1"u8);
        headers.Append("X-A"u8, "x"u8);
        IDictionary<string, StringValues> dictionary = headers;

        dictionary.IsReadOnly.ShouldBeFalse();
        dictionary.Keys.ShouldBe(new[] { "Host", "Content-Length", "X-A" });
        dictionary.Values.ShouldBe(new StringValues[] { "h", "1", "x" });
        dictionary.ContainsKey("host").ShouldBeTrue();
        dictionary.ContainsKey("CONTENT-LENGTH").ShouldBeTrue();
        dictionary.ContainsKey("x-a").ShouldBeTrue();
        dictionary.ContainsKey("Accept").ShouldBeFalse();

        var array = new KeyValuePair<string, StringValues>[5];
        dictionary.CopyTo(array, 1);
        array[0].ShouldBe(default);
        array[1].ShouldBe(new KeyValuePair<string, StringValues>("Host", "h"));
        array[2].ShouldBe(new KeyValuePair<string, StringValues>("Content-Length", "1"));
        array[3].ShouldBe(new KeyValuePair<string, StringValues>("X-A", "x"));
        Should.Throw<ArgumentOutOfRangeException>(() => dictionary.CopyTo(array, 3));

        dictionary.ShouldContain(new KeyValuePair<string, StringValues>("Host", "h"));
        dictionary.Remove(new KeyValuePair<string, StringValues>("Host", "other")).ShouldBeFalse();
        dictionary.Remove(new KeyValuePair<string, StringValues>("HOST", "h")).ShouldBeTrue();
        dictionary.Remove(new KeyValuePair<string, StringValues>("x-a", "x")).ShouldBeTrue();
        HeaderAssert.HasCount(dictionary, 1);

        dictionary.Add(new KeyValuePair<string, StringValues>("Accept", "*/*"));
        headers.Accept.ToString().ShouldBe("*/*");
        Should.Throw<Exception>(() => dictionary.Add("ACCEPT", "text/html")).ShouldBeOfType<ArgumentException>();
        Should.Throw<Exception>(() => dictionary.Add("content-length", "2")).ShouldBeOfType<ArgumentException>();
        dictionary.Add("X-B", "b");
        Should.Throw<Exception>(() => dictionary.Add("x-b", "c")).ShouldBeOfType<ArgumentException>();
        HeaderAssert.HasCount(dictionary, 3);
    }

    [Fact]
    public void A_null_key_throws_ArgumentNullException_as_the_dictionary_contract_says()
    {
        var headers = new RequestHeaders();

        Should.Throw<ArgumentNullException>(() => headers.TryGetValue(null!, out _));
        Should.Throw<ArgumentNullException>(() => headers.ContainsKey(null!));
        Should.Throw<ArgumentNullException>(() => headers.Remove(null!));
        Should.Throw<ArgumentNullException>(() => headers[null!]);
        Should.Throw<ArgumentNullException>(() => headers[null!] = "x");
    }

    [Fact]
    public void Content_length_read_as_text_is_formatted_once_per_value()
    {
        var headers = new RequestHeaders();
        headers.Append("Content-Length"u8, "1234"u8);

        headers.TryGetValue("content-length", out StringValues first).ShouldBeTrue();
        headers.TryGetValue("Content-Length", out StringValues second).ShouldBeTrue();
        string? enumerated = null;
        foreach (KeyValuePair<string, StringValues> pair in headers)
        {
            enumerated = pair.Value;
        }

        first.ToString().ShouldBe("1234");
        second.ToString().ShouldBeSameAs(first.ToString());
        enumerated.ShouldBeSameAs(first.ToString());
        headers.ContentLength = 99;
        headers["Content-Length"].ToString().ShouldBe("99");
    }

    [Fact]
    public void Count_always_equals_the_number_of_enumerated_headers()
    {
        var headers = new RequestHeaders();
        var random = new Random(31);
        string[] names = { "Host", "Accept", "Cookie", "Content-Length", "X-One", "X-Two", "traceparent", "Keep-Alive" };
        for (int step = 0; step < 2_000; step++)
        {
            string name = names[random.Next(names.Length)];
            switch (random.Next(4))
            {
                case 0:
                    headers.Remove(name);
                    break;
                case 1 when step % 50 == 0:
                    headers.Clear();
                    break;
                default:
                    headers.TryAppend(Encoding.ASCII.GetBytes(name), "1"u8);
                    break;
            }

            int enumerated = 0;
            foreach (KeyValuePair<string, StringValues> pair in headers)
            {
                enumerated++;
            }

            headers.Count.ShouldBe(enumerated);
        }
    }
}
