using System;
using System.Buffers;
using System.Collections.Generic;
using System.Text;
using Falconet.Http;
using Microsoft.Extensions.Primitives;
using Shouldly;

namespace Falconet.Generated.Tests;

/// <summary>ResponseHeaders as a collection and as a serializer of "\r\nName: value" lines.</summary>
public sealed class ResponseHeadersCollectionTests
{
    [Fact]
    public void Known_unknown_and_content_length_headers_are_stored_counted_and_enumerated()
    {
        var headers = new ResponseHeaders
        {
            ["x-powered-by"] = "falconet",
            ["content-type"] = "text/plain",
            ["Content-Length"] = "13",
            ["SERVER"] = "Falconet",
        };

        var seen = new List<string>();
        foreach (KeyValuePair<string, StringValues> pair in headers)
        {
            seen.Add(pair.Key + "=" + pair.Value);
        }

        seen.ShouldBe(new[] { "Server=Falconet", "Content-Type=text/plain", "Content-Length=13", "x-powered-by=falconet" });
        HeaderAssert.HasCount(headers, 4);
        headers.ContentType.ToString().ShouldBe("text/plain");
        headers.ContentLength.ShouldBe(13);
        headers["X-Powered-By"].ToString().ShouldBe("falconet");
    }

    [Fact]
    public void Duplicates_remove_clear_and_the_indexer_behave_like_a_dictionary()
    {
        var headers = new ResponseHeaders();
        headers["set-cookie"] = new StringValues(new[] { "a=1", "b=2" });
        headers["Vary"] = "Origin";
        headers["X-Custom"] = "1";
        headers.ContentLength = 0;

        headers.SetCookie.ToArray().ShouldBe(new[] { "a=1", "b=2" });
        HeaderAssert.HasCount(headers, 4);
        headers.ContainsKey("vary").ShouldBeTrue();
        headers.Remove("VARY").ShouldBeTrue();
        headers.Remove("Vary").ShouldBeFalse();
        headers.Remove("x-custom").ShouldBeTrue();
        HeaderAssert.HasCount(headers, 2);
        Should.Throw<FormatException>(() => headers["Content-Length"] = "1, 1");
        headers.ContentLength.ShouldBe(0);

        headers.Clear();
        HeaderAssert.HasCount(headers, 0);
        headers.ShouldBeEmpty();
        headers["Set-Cookie"].ShouldBe(StringValues.Empty);
    }

    [Fact]
    public void CopyTo_writes_each_set_header_in_bit_order_then_content_length_then_unknown_headers()
    {
        var headers = new ResponseHeaders();
        headers["X-Request-Id"] = "r1";
        headers.ContentLength = 1234;
        headers.SetCookie = new StringValues(new[] { "a=1", "b=2" });
        headers.ContentType = "text/plain";
        headers.Date = "Sun, 22 Nov 2026 02:00:00 GMT";
        headers.Server = "Falconet";

        string written = Write(headers);

        written.ShouldBe("\r\nServer: Falconet" +
            "\r\nDate: Sun, 22 Nov 2026 02:00:00 GMT" +
            "\r\nContent-Type: text/plain" +
            "\r\nSet-Cookie: a=1" +
            "\r\nSet-Cookie: b=2" +
            "\r\nContent-Length: 1234" +
            "\r\nX-Request-Id: r1");
    }

    [Fact]
    public void CopyTo_writes_every_known_header_under_its_schema_name()
    {
        var headers = new ResponseHeaders();
        var expected = new StringBuilder();
        foreach (string name in KnownSchema.ResponseHeaders)
        {
            headers[name.ToUpperInvariant()] = "0";
        }

        // Bit order is schema order with Content-Length taken out of the bit set and written after it.
        foreach (string name in KnownSchema.ResponseHeaders)
        {
            if (name != "Content-Length")
            {
                expected.Append("\r\n").Append(name).Append(": 0");
            }
        }

        expected.Append("\r\nContent-Length: 0");

        headers.Count.ShouldBe(KnownSchema.ResponseHeaders.Count);
        Write(headers).ShouldBe(expected.ToString());
    }

    [Fact]
    public void CopyTo_writes_nothing_for_an_empty_collection_and_latin1_values_byte_for_byte()
    {
        var headers = new ResponseHeaders();
        Write(headers).ShouldBe(string.Empty);

        headers.Location = "/caf\u00e9";
        var writer = new ArrayBufferWriter<byte>();
        headers.CopyTo(ref writer);

        byte[] expected = [.. "\r\nLocation: /caf"u8, 0xE9];
        writer.WrittenSpan.ToArray().ShouldBe(expected);
    }

    [Fact]
    public void CopyTo_refuses_values_it_cannot_write_safely()
    {
        var headers = new ResponseHeaders { Location = "/a\r\nX-Injected: 1" };
        var writer = new ArrayBufferWriter<byte>();

        var failure = Should.Throw<Exception>(() => headers.CopyTo(ref writer)).ShouldBeOfType<InvalidOperationException>();
        failure.Message.ShouldContain("'Location'", Case.Sensitive);
    }

    [Fact]
    public void CopyTo_writes_nothing_at_all_when_any_header_cannot_be_written()
    {
        var headers = new ResponseHeaders { Server = "Falconet", ContentLength = 3 };
        headers["X-Bad Name"] = "value";
        var writer = new ArrayBufferWriter<byte>();

        var failure = Should.Throw<InvalidOperationException>(() => headers.CopyTo(ref writer));
        failure.ShouldBeOfType<InvalidOperationException>();
        failure.Message.ShouldContain("'X-Bad Name'", Case.Sensitive);
        writer.WrittenCount.ShouldBe(0);
    }

    private static string Write(ResponseHeaders headers)
    {
        var writer = new ArrayBufferWriter<byte>();
        headers.CopyTo(ref writer);
        return Encoding.Latin1.GetString(writer.WrittenSpan);
    }
}
