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

    // Sixteen request lines with the methods of a varied workload, so branch prediction cannot learn one answer.
    private readonly byte[][] _mixed = Array.ConvertAll(
        new[]
        {
            "GET /a HTTP/1.1", "POST /b HTTP/1.1", "GET /c HTTP/1.1", "PUT /d HTTP/1.1",
            "DELETE /e HTTP/1.1", "GET /f HTTP/1.1", "HEAD /g HTTP/1.1", "PATCH /h HTTP/1.1",
            "OPTIONS * HTTP/1.1", "GET /i HTTP/1.1", "POST /j HTTP/1.1", "CONNECT a:443 HTTP/1.1",
            "GET /k HTTP/1.1", "TRACE /l HTTP/1.1", "PROPFIND /m HTTP/1.1", "GET /n HTTP/1.1",
        },
        Encoding.ASCII.GetBytes);

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

    /// <summary>Decoding and switching over sixteen request lines with mixed methods; the time is per line.</summary>
    [Benchmark(OperationsPerInvoke = 16, Description = "ASCII decode + string switch, 16 mixed methods")]
    public int DecodeAndSwitchMixed()
    {
        int sum = 0;
        foreach (byte[] line in _mixed)
        {
            ReadOnlySpan<byte> span = line;
            int space = span.IndexOf((byte)' ');
            sum += Encoding.ASCII.GetString(span.Slice(0, space)) switch
            {
                "GET" => (int)KnownMethod.Get,
                "PUT" => (int)KnownMethod.Put,
                "DELETE" => (int)KnownMethod.Delete,
                "POST" => (int)KnownMethod.Post,
                "HEAD" => (int)KnownMethod.Head,
                "TRACE" => (int)KnownMethod.Trace,
                "PATCH" => (int)KnownMethod.Patch,
                "CONNECT" => (int)KnownMethod.Connect,
                "OPTIONS" => (int)KnownMethod.Options,
                _ => (int)KnownMethod.Custom,
            };
        }

        return sum;
    }

    /// <summary>The generated matcher over the same sixteen lines; the time is per line.</summary>
    [Benchmark(OperationsPerInvoke = 16, Description = "KnownMethods.Match, 16 mixed methods")]
    public int GeneratedMixed()
    {
        int sum = 0;
        foreach (byte[] line in _mixed)
        {
            sum += (int)KnownMethods.Match(line, out int length) + length;
        }

        return sum;
    }
}
