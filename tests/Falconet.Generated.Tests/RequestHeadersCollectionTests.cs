using System;
using System.Collections.Generic;
using System.Text;
using Falconet.Http;
using Microsoft.Extensions.Primitives;

namespace Falconet.Generated.Tests;

/// <summary>RequestHeaders as a collection: known, unknown and Content-Length headers through every part of its surface.</summary>
public sealed class RequestHeadersCollectionTests
{
    [Fact]
    public void TryAppend_stores_known_unknown_and_content_length_headers_where_each_can_be_read()
    {
        var headers = new RequestHeaders();

        Assert.True(headers.TryAppend("host"u8, "example.com"u8));
        Assert.True(headers.TryAppend("X-Trace-Id"u8, "abc"u8));
        Assert.True(headers.TryAppend("content-length"u8, "42"u8));

        HeaderAssert.HasCount(headers, 3);
        Assert.Equal("example.com", headers.Host);
        Assert.Equal("example.com", headers["HOST"]);
        Assert.Equal(42, headers.ContentLength);
        Assert.Equal("42", headers["Content-Length"]);
        Assert.Equal("abc", headers["x-trace-id"]);
        Assert.True(headers.TryGetValue("X-TRACE-ID", out StringValues unknown));
        Assert.Equal("abc", unknown);
        Assert.False(headers.TryGetValue("Accept", out StringValues absent));
        Assert.Equal(StringValues.Empty, absent);
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

        Assert.Equal(new[] { "Host=localhost", "User-Agent=curl/8.5", "Content-Length=7", "X-Custom=1" }, seen);
        Assert.Equal(seen.Count, headers.Count);
    }

    [Fact]
    public void Duplicate_headers_are_kept_as_several_values_and_enumerated_once()
    {
        var headers = new RequestHeaders();
        headers.Append("Accept"u8, "text/html"u8);
        headers.Append("ACCEPT"u8, "*/*"u8);
        headers.Append("X-Forwarded-Path"u8, "/a"u8);
        headers.Append("x-forwarded-path"u8, "/b"u8);

        Assert.Equal(new[] { "text/html", "*/*" }, headers.Accept.ToArray());
        Assert.Equal(new[] { "/a", "/b" }, headers["X-Forwarded-Path"].ToArray());
        HeaderAssert.HasCount(headers, 2);

        int entries = 0;
        foreach (KeyValuePair<string, StringValues> pair in headers)
        {
            entries++;
            Assert.Equal(2, pair.Value.Count);
        }

        Assert.Equal(2, entries);
    }

    [Fact]
    public void A_repeated_equal_content_length_is_accepted_once()
    {
        var headers = new RequestHeaders();

        Assert.True(headers.TryAppend("Content-Length"u8, "10"u8));
        Assert.True(headers.TryAppend("content-length"u8, "10"u8));

        Assert.Equal(10, headers.ContentLength);
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

        Assert.False(headers.TryAppend("Content-Length"u8, Encoding.ASCII.GetBytes(value)));
        Assert.Null(headers.ContentLength);
        HeaderAssert.HasCount(headers, 0);
        Assert.Throws<FormatException>(() => headers.Append("Content-Length"u8, Encoding.ASCII.GetBytes(value)));
    }

    [Fact]
    public void TryAppend_accepts_the_largest_content_length_and_rejects_a_different_second_one()
    {
        var headers = new RequestHeaders();

        Assert.True(headers.TryAppend("Content-Length"u8, "9223372036854775807"u8));
        Assert.Equal(long.MaxValue, headers.ContentLength);
        Assert.False(headers.TryAppend("Content-Length"u8, "0"u8));
        Assert.Equal(long.MaxValue, headers.ContentLength);
    }

    [Fact]
    public void Remove_deletes_known_unknown_and_content_length_headers_and_reports_whether_they_were_there()
    {
        var headers = new RequestHeaders();
        headers.Append("Cookie"u8, "a=1"u8);
        headers.Append("X-Custom"u8, "1"u8);
        headers.Append("Content-Length"u8, "3"u8);

        Assert.True(headers.Remove("COOKIE"));
        Assert.False(headers.Remove("Cookie"));
        Assert.True(headers.Remove("x-custom"));
        Assert.False(headers.Remove("X-Custom"));
        Assert.True(headers.Remove("Content-Length"));
        Assert.False(headers.Remove("Content-Length"));
        Assert.False(headers.Remove("Never-Added"));

        HeaderAssert.HasCount(headers, 0);
        Assert.Equal(StringValues.Empty, headers.Cookie);
        Assert.Null(headers.ContentLength);
        Assert.False(headers.ContainsKey("Cookie"));
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
        Assert.Empty(headers);
        Assert.Equal(StringValues.Empty, headers.Host);
        Assert.False(headers.ContainsKey("X-Custom"));
        Assert.Null(headers.ContentLength);

        headers.Append("host"u8, "b"u8);
        Assert.Equal("b", headers.Host);
        HeaderAssert.HasCount(headers, 1);
    }

    [Fact]
    public void The_indexer_sets_replaces_and_removes_known_unknown_and_content_length_headers()
    {
        var headers = new RequestHeaders();

        headers["content-type"] = "text/plain";
        headers["X-Custom"] = new StringValues(new[] { "1", "2" });
        headers["Content-Length"] = "12";

        Assert.Equal("text/plain", headers.ContentType);
        Assert.Equal(new[] { "1", "2" }, headers["x-custom"].ToArray());
        Assert.Equal(12, headers.ContentLength);
        HeaderAssert.HasCount(headers, 3);

        headers["Content-Type"] = "application/json";
        Assert.Equal("application/json", headers["CONTENT-TYPE"]);

        headers["Content-Type"] = StringValues.Empty;
        headers["X-Custom"] = StringValues.Empty;
        headers["Content-Length"] = StringValues.Empty;
        HeaderAssert.HasCount(headers, 0);
        Assert.Equal(StringValues.Empty, headers["Content-Type"]);
        Assert.Equal(StringValues.Empty, headers["X-Custom"]);
        Assert.Equal(StringValues.Empty, headers["Content-Length"]);
        Assert.Throws<FormatException>(() => headers["Content-Length"] = "twelve");
    }

    [Fact]
    public void Typed_properties_set_and_clear_their_header()
    {
        var headers = new RequestHeaders { Referer = "https://example.com/", ContentLength = 5 };

        Assert.Equal("https://example.com/", headers["Referer"]);
        Assert.Equal("5", headers["content-length"]);
        HeaderAssert.HasCount(headers, 2);

        headers.Referer = StringValues.Empty;
        headers.ContentLength = null;
        HeaderAssert.HasCount(headers, 0);
        Assert.Throws<ArgumentOutOfRangeException>(() => headers.ContentLength = -1);
    }

    [Fact]
    public void The_dictionary_surface_reports_keys_values_and_copies_every_header()
    {
        var headers = new RequestHeaders();
        headers.Append("Host"u8, "h"u8);
        headers.Append("Content-Length"u8, "1"u8);
        headers.Append("X-A"u8, "x"u8);
        IDictionary<string, StringValues> dictionary = headers;

        Assert.False(dictionary.IsReadOnly);
        Assert.Equal(new[] { "Host", "Content-Length", "X-A" }, dictionary.Keys);
        Assert.Equal(new StringValues[] { "h", "1", "x" }, dictionary.Values);
        Assert.True(dictionary.ContainsKey("host"));
        Assert.True(dictionary.ContainsKey("CONTENT-LENGTH"));
        Assert.True(dictionary.ContainsKey("x-a"));
        Assert.False(dictionary.ContainsKey("Accept"));

        var array = new KeyValuePair<string, StringValues>[5];
        dictionary.CopyTo(array, 1);
        Assert.Equal(default, array[0]);
        Assert.Equal(new KeyValuePair<string, StringValues>("Host", "h"), array[1]);
        Assert.Equal(new KeyValuePair<string, StringValues>("Content-Length", "1"), array[2]);
        Assert.Equal(new KeyValuePair<string, StringValues>("X-A", "x"), array[3]);
        Assert.Throws<ArgumentOutOfRangeException>(() => dictionary.CopyTo(array, 3));

        Assert.Contains(new KeyValuePair<string, StringValues>("Host", "h"), dictionary);
        Assert.False(dictionary.Remove(new KeyValuePair<string, StringValues>("Host", "other")));
        Assert.True(dictionary.Remove(new KeyValuePair<string, StringValues>("HOST", "h")));
        Assert.True(dictionary.Remove(new KeyValuePair<string, StringValues>("x-a", "x")));
        HeaderAssert.HasCount(dictionary, 1);

        dictionary.Add(new KeyValuePair<string, StringValues>("Accept", "*/*"));
        Assert.Equal("*/*", headers.Accept);
        Assert.Throws<ArgumentException>(() => dictionary.Add("ACCEPT", "text/html"));
        Assert.Throws<ArgumentException>(() => dictionary.Add("content-length", "2"));
        dictionary.Add("X-B", "b");
        Assert.Throws<ArgumentException>(() => dictionary.Add("x-b", "c"));
        HeaderAssert.HasCount(dictionary, 3);
    }

    [Fact]
    public void A_null_key_throws_ArgumentNullException_as_the_dictionary_contract_says()
    {
        var headers = new RequestHeaders();

        Assert.Throws<ArgumentNullException>(() => headers.TryGetValue(null!, out _));
        Assert.Throws<ArgumentNullException>(() => headers.ContainsKey(null!));
        Assert.Throws<ArgumentNullException>(() => headers.Remove(null!));
        Assert.Throws<ArgumentNullException>(() => headers[null!]);
        Assert.Throws<ArgumentNullException>(() => headers[null!] = "x");
    }

    [Fact]
    public void Content_length_read_as_text_is_formatted_once_per_value()
    {
        var headers = new RequestHeaders();
        headers.Append("Content-Length"u8, "1234"u8);

        Assert.True(headers.TryGetValue("content-length", out StringValues first));
        Assert.True(headers.TryGetValue("Content-Length", out StringValues second));
        string? enumerated = null;
        foreach (KeyValuePair<string, StringValues> pair in headers)
        {
            enumerated = pair.Value;
        }

        Assert.Equal("1234", first);
        Assert.Same(first.ToString(), second.ToString());
        Assert.Same(first.ToString(), enumerated);
        headers.ContentLength = 99;
        Assert.Equal("99", headers["Content-Length"]);
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

            Assert.Equal(enumerated, headers.Count);
        }
    }
}
