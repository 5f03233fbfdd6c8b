using System;
using System.Buffers;
using BenchmarkDotNet.Attributes;
using Falconet.Http;
using Falconet.Http.Http1;
using Falconet.Http.Parsing.Tests.Support;

namespace Falconet.Benchmarks.Parsing;

/// <summary>Parses a typical browser request (request line and 11 headers) with a struct handler.</summary>
[MemoryDiagnoser]
public class RequestParsingBenchmarks
{
    private ReadOnlySequence<byte> _oneBlock;
    private ReadOnlySequence<byte> _twoBlocks;

    /// <summary>Builds the inputs: the request in one block, and split in the middle of a header line.</summary>
    [GlobalSetup]
    public void Setup()
    {
        byte[] request = HeaderBlocks.BrowserRequest;
        _oneBlock = new ReadOnlySequence<byte>(request);
        _twoBlocks = Segments.Chain(Segments.SplitAt(request, request.Length / 2));
    }

    /// <summary>The whole request in one block.</summary>
    [Benchmark(Baseline = true)]
    public int OneBlock() => Parse(_oneBlock);

    /// <summary>The request across two blocks: one header line is copied before parsing.</summary>
    [Benchmark]
    public int TwoBlocks() => Parse(_twoBlocks);

    private static int Parse(ReadOnlySequence<byte> input)
    {
        var handler = default(CountingHandler);
        var state = default(HeaderParseState);
        var reader = new SequenceReader<byte>(input);
        Http1Parser.TryParseRequestLine(ref handler, ref reader, HttpLimits.Default);
        Http1Parser.TryParseHeaders(ref handler, ref reader, HttpLimits.Default, ref state);
        return handler.Headers + handler.TargetLength;
    }

    private struct CountingHandler : IHttpRequestLineHandler, IHttpHeadersHandler
    {
        public int Headers;
        public int TargetLength;

        public void OnRequestLine(KnownMethod method, ReadOnlySpan<byte> methodToken, ReadOnlySpan<byte> target,
            RequestTargetForm form, int queryIndex, KnownVersion version) => TargetLength = target.Length;

        public bool OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
        {
            Headers++;
            return true;
        }

        public readonly void OnHeadersComplete()
        {
        }
    }
}
