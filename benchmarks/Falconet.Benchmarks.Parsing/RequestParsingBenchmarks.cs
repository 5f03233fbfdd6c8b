using System;
using System.Buffers;
using BenchmarkDotNet.Attributes;
using Falconet.Http;

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
        int split = request.Length / 2;
        var first = new Block(request.AsMemory(0, split), 0);
        Block second = first.Append(request.AsMemory(split));
        _twoBlocks = new ReadOnlySequence<byte>(first, 0, second, second.Memory.Length);
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

    private sealed class Block : ReadOnlySequenceSegment<byte>
    {
        public Block(ReadOnlyMemory<byte> memory, long runningIndex)
        {
            Memory = memory;
            RunningIndex = runningIndex;
        }

        public Block Append(ReadOnlyMemory<byte> memory)
        {
            var next = new Block(memory, RunningIndex + Memory.Length);
            Next = next;
            return next;
        }
    }
}
