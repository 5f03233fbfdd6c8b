using System;
using System.Buffers;
using System.Text;
using Falconet.Http.Http1;
using Falconet.Http.Parsing.Tests.Support;
using Shouldly;

namespace Falconet.Http.Parsing.Tests;

/// <summary>After warm-up the parser and the decoder allocate nothing, with the request in one block or across blocks.</summary>
public sealed class AllocationTests
{
    private static readonly byte[] s_request = RequestSuite.Bytes(RequestSuite.Valid["browser request with many headers"].Request);

    [Fact]
    public void Parsing_a_typical_request_in_one_block_allocates_nothing()
    {
        var input = new ReadOnlySequence<byte>(s_request);

        AllocatedWhileParsing(input).ShouldBe(0);
    }

    [Fact]
    public void Parsing_a_typical_request_across_blocks_allocates_nothing()
    {
        ReadOnlySequence<byte> input = Segments.Chain(Segments.SplitAt(s_request, 20, 150, 300, 301));

        AllocatedWhileParsing(input).ShouldBe(0);
    }

    [Fact]
    public void Decoding_a_chunked_body_across_blocks_allocates_nothing()
    {
        byte[] encoded = Encoding.ASCII.GetBytes("5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n");
        ReadOnlySequence<byte> input = Segments.Chain(Segments.SplitAt(encoded, 3, 12, 30));
        byte[] destination = new byte[4];

        for (int i = 0; i < 100; i++)
        {
            Decode(input, destination);
        }

        // The quietest of up to three windows: the decoder's allocation shows in each, the runtime's own comes once.
        long allocated = long.MaxValue;
        for (int window = 0; window < 3 && allocated > 0; window++)
        {
            long decoded = 0;
            long before = GC.GetAllocatedBytesForCurrentThread();
            for (int i = 0; i < 1000; i++)
            {
                decoded += Decode(input, destination);
            }

            allocated = Math.Min(allocated, GC.GetAllocatedBytesForCurrentThread() - before);
            decoded.ShouldBe(11 * 1000);
        }

        allocated.ShouldBe(0);
    }

    private static long AllocatedWhileParsing(ReadOnlySequence<byte> input)
    {
        for (int i = 0; i < 100; i++)
        {
            Parse(input);
        }

        // The quietest of up to three windows: the parser's allocation shows in each, the runtime's own comes once.
        long allocated = long.MaxValue;
        for (int window = 0; window < 3 && allocated > 0; window++)
        {
            int headers = 0;
            long before = GC.GetAllocatedBytesForCurrentThread();
            for (int i = 0; i < 1000; i++)
            {
                headers += Parse(input).Headers;
            }

            allocated = Math.Min(allocated, GC.GetAllocatedBytesForCurrentThread() - before);
            headers.ShouldBe(11 * 1000);
        }

        return allocated;
    }

    private static CountingHandler Parse(ReadOnlySequence<byte> input)
    {
        var handler = default(CountingHandler);
        var state = default(HeaderParseState);
        var reader = new SequenceReader<byte>(input);
        Http1Parser.TryParseRequestLine(ref handler, ref reader, HttpLimits.Default);
        Http1Parser.TryParseHeaders(ref handler, ref reader, HttpLimits.Default, ref state);
        return handler;
    }

    private static int Decode(ReadOnlySequence<byte> input, byte[] destination)
    {
        var decoder = default(ChunkedDecoder);
        var reader = new SequenceReader<byte>(input);
        int total = 0;
        bool completed;
        do
        {
            total += decoder.Decode(ref reader, destination, HttpLimits.Default, out completed);
        }
        while (!completed);

        return total;
    }

    private struct CountingHandler : IHttpRequestLineHandler, IHttpHeadersHandler
    {
        public int Headers;
        public int ValueBytes;
        public KnownMethod Method;

        public void OnRequestLine(KnownMethod method, ReadOnlySpan<byte> methodToken, ReadOnlySpan<byte> target,
            RequestTargetForm form, int queryIndex, KnownVersion version) => Method = method;

        public bool OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
        {
            Headers++;
            ValueBytes += value.Length;
            return true;
        }

        public readonly void OnHeadersComplete()
        {
        }
    }
}
