using System;
using BenchmarkDotNet.Attributes;
using Falconet.HPack.Tests.Support;
using Falconet.Http;
using Falconet.Http.Http2.HPack;

namespace Falconet.Benchmarks.Parsing;

/// <summary>
/// A Chromium navigation's header block decoded by Falconet's HPACK decoder and by Kestrel's own
/// (<c>System.Net.Http.HPack.HPackDecoder</c> from the shared framework, reached through <see cref="KestrelHPack"/>), both
/// ending with every field stored in the same request header collection the same way (the set's matcher, then
/// <c>TryAppendMatched</c>; a static entry's slot from the static table for both). <c>First</c>: the first request of a
/// connection, the dynamic table emptied by a size update before it (4 bytes more), so every field is inserted again;
/// <c>Repeated</c>: the next navigation, every field but the path an index into the dynamic table.
/// </summary>
[MemoryDiagnoser]
public class HPackDecoderComparison
{
    private static readonly byte[] s_emptyTable = [0x20, 0x3F, 0xE1, 0x1F];

    private readonly RequestHeaders _headers = new();
    private HPackDecoder _falconet = new();
    private object _kestrel = null!;
    private KestrelStoringHandler _kestrelHandler = null!;
    private byte[] _block = [];

    /// <summary>The block decoded.</summary>
    [Params("First", "Repeated")]
    public string Request { get; set; } = "First";

    /// <summary>Primes both decoders with the first request and checks that they store the same headers.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _falconet = new HPackDecoder();
        _kestrel = KestrelHPack.CreateDecoder();
        _kestrelHandler = KestrelHPack.CreateHandler<KestrelStoringHandler>(_headers);
        _block = [.. s_emptyTable, .. BrowserBlocks.First.Block];
        Falconet();
        Kestrel();
        if (Request == "Repeated")
        {
            _block = BrowserBlocks.Repeated.Block;
        }

        int count = Falconet();
        string fromFalconet = Describe();
        if (count != Kestrel() || fromFalconet != Describe())
        {
            throw new InvalidOperationException($"The decoders disagree: {fromFalconet} against {Describe()}.");
        }
    }

    /// <summary>Kestrel's decoder (the baseline).</summary>
    [Benchmark(Baseline = true)]
    public int Kestrel()
    {
        _headers.Clear();
        KestrelHPack.Decode(_kestrel, _block, _kestrelHandler);
        return _headers.Count;
    }

    /// <summary>Falconet's decoder.</summary>
    [Benchmark]
    public int Falconet()
    {
        _headers.Clear();
        var handler = new CollectionHandler<BuiltInHeaderSet>(_headers);
        if (_falconet.Decode(_block, ref handler) != HPackDecodeResult.Success)
        {
            throw new InvalidOperationException("Falconet refused the block.");
        }

        return _headers.Count;
    }

    private string Describe() => string.Join("|", System.Linq.Enumerable.Select(_headers, static pair => pair.Key + "=" + pair.Value));
}
