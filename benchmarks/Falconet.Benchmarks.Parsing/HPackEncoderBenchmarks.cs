using System;
using BenchmarkDotNet.Attributes;
using Falconet.Http;
using Falconet.Http.Http2.HPack;

namespace Falconet.Benchmarks.Parsing;

/// <summary>
/// The response encoder's cost per response head: a minimal API's response (Server, Date, Content-Type, a Content-Length
/// that changes) on a warm connection, where every header but the length is a dynamic table index, and the same head
/// as the first response of a connection (the table emptied by a size update first), where each value is a literal and
/// its Huffman length is computed; each with Huffman coding on and off.
/// </summary>
[MemoryDiagnoser]
public class HPackEncoderBenchmarks
{
    private readonly ResponseHeaders _headers = new()
    {
        Server = "Falconet",
        Date = "Tue, 25 Nov 2026 16:05:00 GMT",
        ContentType = "application/json; charset=utf-8",
    };

    private readonly byte[] _destination = new byte[512];
    private HPackEncoder _encoder = new();
    private long _length;

    /// <summary>A warm connection's response, or a connection's first.</summary>
    [Params("Warm", "First")]
    public string Response { get; set; } = "Warm";

    /// <summary>Huffman coding where it is shorter, or raw strings only.</summary>
    [Params(true, false)]
    public bool Huffman { get; set; } = true;

    /// <summary>Warms the encoder up: the values are then in its table.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _encoder = new HPackEncoder(huffman: Huffman);
        for (int i = 0; i < 3; i++)
        {
            Encode();
        }
    }

    /// <summary>Encodes the response head; returns its length in bytes.</summary>
    [Benchmark]
    public int Encode()
    {
        if (Response == "First")
        {
            // An empty table, as on a new connection: the next block starts with two size updates (4 bytes).
            _encoder.SetPeerMaxTableSize(0);
            _encoder.SetPeerMaxTableSize(4096);
        }

        _headers.ContentLength = 1000 + (_length++ & 0xFF);
        if (!_encoder.TryEncodeResponseHeaders(200, _headers, _destination, out int written))
        {
            throw new InvalidOperationException("The destination is too small.");
        }

        return written;
    }
}
