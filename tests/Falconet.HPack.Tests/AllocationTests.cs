using System;
using Falconet.HPack.Tests.Support;
using Falconet.Http;
using Falconet.Http.Http2.HPack;
using Shouldly;

namespace Falconet.HPack.Tests;

/// <summary>Decoding a browser's requests into a header collection allocates nothing once the connection is warm.</summary>
public sealed class AllocationTests
{
    [Fact]
    public void The_browser_blocks_deliver_their_fields_in_order()
    {
        using var session = new DecoderSession();

        session.Decode(BrowserBlocks.First.Block).ShouldBe(HPackDecodeResult.Success);
        session.Recording.Fields.ShouldBe(BrowserBlocks.First.Fields);
        session.Decode(BrowserBlocks.Repeated.Block).ShouldBe(HPackDecodeResult.Success);
        session.Recording.Fields.ShouldBe(BrowserBlocks.Repeated.Fields);
        BrowserBlocks.Repeated.Block.Length.ShouldBeLessThan(BrowserBlocks.First.Block.Length / 5);
    }

    [Fact]
    public void Repeated_requests_on_one_connection_allocate_nothing_in_steady_state()
    {
        using var decoder = new HPackDecoder();
        var headers = new RequestHeaders();
        var handler = new CollectionHandler<BuiltInHeaderSet>(headers);

        // The first request inserts the entries and makes the strings the collection then reuses.
        decoder.Decode(BrowserBlocks.First.Block, ref handler).ShouldBe(HPackDecodeResult.Success);
        for (int i = 0; i < 10; i++)
        {
            headers.Clear();
            decoder.Decode(BrowserBlocks.Repeated.Block, ref handler).ShouldBe(HPackDecodeResult.Success);
        }

        // The quietest of up to three windows: the decoder's allocation shows in each, the runtime's own comes once.
        long allocated = long.MaxValue;
        int decodes = 11;
        int failures = 0;
        for (int window = 0; window < 3 && allocated > 0; window++)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            for (int i = 0; i < 1000; i++)
            {
                headers.Clear();
                failures += decoder.Decode(BrowserBlocks.Repeated.Block, ref handler) == HPackDecodeResult.Success ? 0 : 1;
            }

            allocated = Math.Min(allocated, GC.GetAllocatedBytesForCurrentThread() - before);
            decodes += 1000;
        }

        allocated.ShouldBe(0);
        failures.ShouldBe(0);
        headers.UserAgent.ToString().ShouldStartWith("Mozilla/5.0");
        headers.Cookie.ToString().ShouldBe("session=8f14e45fceea167a5a36dedd4bea2543; theme=dark");
        handler.PseudoHeaders.ShouldBe(4 * decodes);
    }

    [Fact]
    public void Encoding_a_response_head_allocates_nothing_in_steady_state()
    {
        var encoder = new HPackEncoder();
        var headers = new ResponseHeaders { Server = "Falconet", Date = "Mon, 21 Oct 2013 20:13:21 GMT", ContentType = "text/plain", ContentLength = 13 };
        headers["X-Request-Id"] = "4bf92f3577b34da6";
        var destination = new byte[HPackEncoder.GetMaxEncodedLength(headers)];
        for (int i = 0; i < 10; i++)
        {
            encoder.TryEncodeResponseHeaders(200, headers, destination, out _).ShouldBeTrue();
        }

        long allocated = long.MaxValue;
        int written = 0;
        for (int window = 0; window < 3 && allocated > 0; window++)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            for (int i = 0; i < 1000; i++)
            {
                headers.ContentLength = i;
                encoder.TryEncodeResponseHeaders(200, headers, destination, out written);
            }

            allocated = Math.Min(allocated, GC.GetAllocatedBytesForCurrentThread() - before);
        }

        allocated.ShouldBe(0);
        written.ShouldBeLessThan(40);
    }
}
