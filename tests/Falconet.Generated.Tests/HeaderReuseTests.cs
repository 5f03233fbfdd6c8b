using System;
using Falconet.Http;
using Microsoft.Extensions.Primitives;
using Shouldly;

namespace Falconet.Generated.Tests;

/// <summary>Reuse of one collection across the requests of a connection: shared strings and no allocation once warm.</summary>
public sealed class HeaderReuseTests
{
    private static readonly byte[] s_host = "Host"u8.ToArray();
    private static readonly byte[] s_userAgent = "User-Agent"u8.ToArray();
    private static readonly byte[] s_accept = "Accept"u8.ToArray();
    private static readonly byte[] s_acceptEncoding = "Accept-Encoding"u8.ToArray();
    private static readonly byte[] s_acceptLanguage = "Accept-Language"u8.ToArray();
    private static readonly byte[] s_connection = "Connection"u8.ToArray();
    private static readonly byte[] s_cookie = "Cookie"u8.ToArray();
    private static readonly byte[] s_referer = "Referer"u8.ToArray();

    [Fact]
    public void After_Clear_an_equal_value_returns_the_previous_requests_string_instance()
    {
        var headers = new RequestHeaders();
        headers.Append("Host"u8, "www.example.com"u8);
        headers.Append("User-Agent"u8, "Mozilla/5.0 (X11; Linux x86_64)"u8);
        string host = headers.Host.ToString();
        string userAgent = headers.UserAgent.ToString();

        headers.Clear();
        headers.Append("host"u8, "www.example.com"u8);
        headers.Append("user-agent"u8, "Mozilla/5.0 (X11; Linux x86_64)"u8);

        headers.Host.ToString().ShouldBeSameAs(host);
        headers.UserAgent.ToString().ShouldBeSameAs(userAgent);
    }

    [Fact]
    public void After_Clear_a_different_value_makes_a_new_string()
    {
        var headers = new RequestHeaders();
        headers.Append("Host"u8, "a.example.com"u8);
        string first = headers.Host.ToString();

        headers.Clear();
        headers.Append("Host"u8, "b.example.com"u8);

        headers.Host.ToString().ShouldBe("b.example.com");
        headers.Host.ToString().ShouldNotBeSameAs(first);
    }

    [Fact]
    public void A_known_value_is_the_same_shared_instance_in_every_collection_and_request()
    {
        var first = new RequestHeaders();
        var second = new RequestHeaders();
        first.Append("Connection"u8, "keep-alive"u8);
        second.Append("Connection"u8, "keep-alive"u8);
        string shared = first.Connection.ToString();

        second.Connection.ToString().ShouldBeSameAs(shared);
        first.Clear();
        first.Append("Connection"u8, "close"u8);
        first.Clear();
        first.Append("Connection"u8, "keep-alive"u8);
        first.Connection.ToString().ShouldBeSameAs(shared);
    }

    [Fact]
    public void A_known_value_is_matched_case_sensitively()
    {
        var headers = new RequestHeaders();
        headers.Append("Connection"u8, "keep-alive"u8);
        string lower = headers.Connection.ToString();
        headers.Clear();
        headers.Append("Connection"u8, "Keep-Alive"u8);

        headers.Connection.ToString().ShouldBe("Keep-Alive");
        headers.Connection.ToString().ShouldNotBeSameAs(lower);
    }

    [Fact]
    public void A_value_the_app_set_through_a_property_is_never_taken_for_the_previous_parsed_value()
    {
        var headers = new RequestHeaders();
        headers.Append("Host"u8, "a.example.com"u8);
        headers.Host = "rewritten.example.com";
        headers.Clear();

        headers.Append("Host"u8, "a.example.com"u8);

        headers.Host.ToString().ShouldBe("a.example.com");
    }

    [Fact]
    public void A_value_the_app_set_through_the_indexer_is_never_taken_for_the_previous_parsed_value()
    {
        var headers = new RequestHeaders();
        headers.Append("Cookie"u8, "a=1"u8);
        headers["cookie"] = new StringValues(new[] { "a=1", "b=2" });
        headers.Clear();

        headers.Append("Cookie"u8, "a=1"u8);

        headers.Cookie.ShouldBe(new StringValues("a=1"));
    }

    [Fact]
    public void A_repeated_header_is_not_reused_as_a_single_value_by_the_next_request()
    {
        var headers = new RequestHeaders();
        headers.Append("Accept"u8, "text/html"u8);
        headers.Append("Accept"u8, "image/png"u8);
        headers.Accept.ShouldBe(new StringValues(new[] { "text/html", "image/png" }));
        headers.Clear();

        headers.Append("Accept"u8, "text/html"u8);

        headers.Accept.ShouldBe(new StringValues("text/html"));
        headers.Clear();
        headers.Append("Accept"u8, "text/html"u8);
        headers.Accept.ShouldBe(new StringValues("text/html"));
    }

    [Fact]
    public void A_removed_header_comes_back_with_the_value_of_the_next_request()
    {
        var headers = new RequestHeaders();
        headers.Append("Referer"u8, "https://a.example/"u8);
        string first = headers.Referer.ToString();
        headers.Remove("Referer").ShouldBeTrue();
        headers.Clear();

        headers.Append("Referer"u8, "https://a.example/"u8);
        headers.Referer.ToString().ShouldBeSameAs(first);
        headers.Clear();
        headers.Append("Referer"u8, "https://b.example/"u8);
        headers.Referer.ToString().ShouldBe("https://b.example/");
    }

    [Fact]
    public void The_fill_read_clear_cycle_of_a_typical_request_allocates_nothing_after_warm_up()
    {
        var headers = new RequestHeaders();
        int read = Cycle(headers) + Cycle(headers);

        // The quietest of up to three windows: an allocation of the collection's shows in each, the runtime's own (a
        // method moving to its optimized tier while the machine is busy) comes once.
        long allocated = long.MaxValue;
        int cycles = 2;
        for (int window = 0; window < 3 && allocated > 0; window++)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            for (int i = 0; i < 1_000; i++)
            {
                read += Cycle(headers);
            }

            allocated = Math.Min(allocated, GC.GetAllocatedBytesForCurrentThread() - before);
            cycles += 1_000;
        }

        allocated.ShouldBe(0);
        read.ShouldBe(cycles * 3);
    }

    [Fact]
    public void A_response_collection_reused_across_requests_allocates_nothing_after_warm_up()
    {
        var headers = new ResponseHeaders();
        var writer = new System.Buffers.ArrayBufferWriter<byte>(4096);
        FillResponse(headers, writer);
        FillResponse(headers, writer);

        long allocated = long.MaxValue;
        for (int window = 0; window < 3 && allocated > 0; window++)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            for (int i = 0; i < 1_000; i++)
            {
                FillResponse(headers, writer);
            }

            allocated = Math.Min(allocated, GC.GetAllocatedBytesForCurrentThread() - before);
        }

        allocated.ShouldBe(0, allocated + " bytes over 1,000 fill/CopyTo/clear cycles of a two-header response (" + (allocated / 1_000) + " per cycle)");
    }

    private static void FillResponse(ResponseHeaders headers, System.Buffers.ArrayBufferWriter<byte> writer)
    {
        headers.Server = "Falconet";
        headers.ContentType = "text/plain";
        headers.ContentLength = 13;
        writer.ResetWrittenCount();
        headers.CopyTo(ref writer);
        headers.Clear();
    }

    private static int Cycle(RequestHeaders headers)
    {
        headers.Append(s_host, "www.example.com"u8);
        headers.Append(s_userAgent, "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"u8);
        headers.Append(s_accept, "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"u8);
        headers.Append(s_acceptEncoding, "gzip, deflate, br, zstd"u8);
        headers.Append(s_acceptLanguage, "en-US,en;q=0.5"u8);
        headers.Append(s_connection, "keep-alive"u8);
        headers.Append(s_cookie, "session=8f14e45fceea167a5a36dedd4bea2543; theme=dark"u8);
        headers.Append(s_referer, "https://www.example.com/articles/falconet"u8);

        int read = 0;
        StringValues host = headers.Host;
        StringValues cookie = headers.Cookie;
        read += host.Count + cookie.Count;
        if (headers.TryGetValue("Accept-Encoding", out StringValues encoding))
        {
            read += encoding.Count;
        }

        headers.Clear();
        return read;
    }
}
