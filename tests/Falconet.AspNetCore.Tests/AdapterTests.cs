using System;
using System.Globalization;
using System.Linq;
using Falconet.Http;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Primitives;
using Shouldly;

namespace Falconet.AspNetCore.Tests;

/// <summary>The header adapters over the generated collections, and the path the request feature reports.</summary>
public sealed class AdapterTests
{
    [Fact]
    public void Request_headers_read_and_write_through_to_the_generated_collection_without_a_copy()
    {
        var headers = new RequestHeaders();
        headers.Append("Host"u8, "example.com"u8);
        headers.Append("X-Custom"u8, "one"u8);
        IHeaderDictionary adapter = new RequestHeaderDictionary(headers);

        adapter.Host.ToString().ShouldBe("example.com");
        adapter["x-custom"].ToString().ShouldBe("one");
        adapter["missing"].ShouldBe(StringValues.Empty);

        adapter["X-Added"] = "two";
        headers.TryGetValue("X-Added", out StringValues added).ShouldBeTrue();
        added.ToString().ShouldBe("two");
        adapter["X-Added"] = StringValues.Empty;
        headers.ContainsKey("X-Added").ShouldBeFalse();

        adapter.ContentLength = 42;
        headers.ContentLength.ShouldBe(42);
        adapter.Count.ShouldBe(headers.Count);
        adapter.Select(h => h.Key).ShouldBe(headers.Select(h => h.Key));
    }

    [Fact]
    public void Response_headers_turn_read_only_once_the_response_started()
    {
        var headers = new ResponseHeaders();
        bool started = false;
        IHeaderDictionary adapter = new ResponseHeaderDictionary(headers, () => started);
        adapter.ContentType = "text/plain";
        headers.ContentType.ToString().ShouldBe("text/plain");

        started = true;
        adapter.IsReadOnly.ShouldBeTrue();
        Should.Throw<InvalidOperationException>(() => adapter["X-Late"] = "late");
        Should.Throw<InvalidOperationException>(() => adapter.ContentLength = 1);
        Should.Throw<InvalidOperationException>(() => adapter.Remove("Content-Type"));
        headers.ContentType.ToString().ShouldBe("text/plain");
    }

    [Theory]
    [InlineData(0L)]
    [InlineData(1L)]
    [InlineData(0xABCDEFL)]
    [InlineData(0xFFFFFFFFL)]
    [InlineData(0x100000000L)]
    [InlineData(long.MaxValue)]
    public void The_trace_identifier_is_the_connection_id_and_the_request_number_in_at_least_eight_hex_digits(long requestNumber)
    {
        // Kestrel's form, which log queries and dashboards expect.
        ConnectionFeatures<object>.CreateTraceIdentifier("1234", requestNumber)
            .ShouldBe(string.Create(CultureInfo.InvariantCulture, $"1234:{requestNumber:X8}"));
    }

    [Theory]
    [InlineData("/a/b", "/a/b")]
    [InlineData("/a%20b", "/a b")]
    [InlineData("/caf%C3%A9", "/café")]
    [InlineData("/a%2Fb", "/a%2Fb")]
    [InlineData("/a/./b", "/a/b")]
    [InlineData("/a/../../b", "/b")]
    [InlineData("/a/b/..", "/a/")]
    [InlineData("/%2e%2e/secret", "/secret")]
    [InlineData("/bad%zz", "/bad%zz")]
    [InlineData("/%FF", "/%FF")]
    public void Paths_are_decoded_and_cannot_climb_above_the_root(string raw, string expected)
        => RequestTarget.RemoveDotSegments(RequestTarget.Decode(System.Text.Encoding.ASCII.GetBytes(raw))).ShouldBe(expected);
}
