using System;
using System.Text;
using BenchmarkDotNet.Attributes;
using Falconet.Http;

namespace Falconet.Benchmarks;

/// <summary>The method of "GET /plaintext HTTP/1.1": the generated ulong-mask matcher against decoding the token and switching on the string.</summary>
[MemoryDiagnoser]
public class MethodMatchBenchmarks
{
    private readonly byte[] _requestLine = "GET /plaintext HTTP/1.1"u8.ToArray();

    /// <summary>What a developer writes without a generator: find the space, decode the token, switch on it.</summary>
    [Benchmark(Baseline = true, Description = "ASCII decode + string switch")]
    public KnownMethod DecodeAndSwitch()
    {
        ReadOnlySpan<byte> line = _requestLine;
        int space = line.IndexOf((byte)' ');
        if (space <= 0)
        {
            return KnownMethod.None;
        }

        return Encoding.ASCII.GetString(line.Slice(0, space)) switch
        {
            "GET" => KnownMethod.Get,
            "PUT" => KnownMethod.Put,
            "DELETE" => KnownMethod.Delete,
            "POST" => KnownMethod.Post,
            "HEAD" => KnownMethod.Head,
            "TRACE" => KnownMethod.Trace,
            "PATCH" => KnownMethod.Patch,
            "CONNECT" => KnownMethod.Connect,
            "OPTIONS" => KnownMethod.Options,
            _ => KnownMethod.Custom,
        };
    }

    /// <summary>The generated matcher: one 8-byte read and masked compares.</summary>
    [Benchmark(Description = "KnownMethods.Match")]
    public KnownMethod Generated() => KnownMethods.Match(_requestLine, out _);
}
