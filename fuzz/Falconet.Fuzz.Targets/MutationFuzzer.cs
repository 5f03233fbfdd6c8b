using System;
using System.Collections.Generic;
using System.Linq;
using System.Text;

namespace Falconet.Fuzz;

/// <summary>
/// A seeded mutation fuzzer for runs without afl++: each input is a seed with one to four mutations (bit flips, HTTP
/// delimiters, framing fragments, deletions, duplications, splices with another seed). The same seed gives the same inputs.
/// </summary>
public sealed class MutationFuzzer
{
    private const int MaxInputLength = 8 * 1024;

    // HTTP delimiters, hex digits, and the bytes at the edges of the character classes the parser tells apart.
    private static readonly byte[] s_interestingBytes = [.. "\r\n \t:;=\",/?#0Ff-"u8, 0x00, 0x7F, 0x80, 0xFF, 0x0B];

    private static readonly byte[][] s_fragments =
    [
        .. new[]
        {
            "\r\n", "\r\n\r\n", "Transfer-Encoding: chunked\r\n", "Content-Length: 5\r\n", "Content-Length: 0\r\n", "Host: x\r\n",
            "Host:\r\n", "0\r\n\r\n", "5\r\nhello\r\n", ";ext=\"v\"", ";", " ;", "HTTP/1.1", "HTTP/1.0", "Expect: 100-continue\r\n",
            "Connection: close\r\n", "Connection: keep-alive\r\n", "CONNECT a:1 ", "HEAD ", "OPTIONS * ", "Trailer: x\r\n",
            "Content-Length: 1\r\n", "Host: a\r\nHost: b\r\n", "Transfer-Encoding: gzip, chunked\r\n", "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        }.Select(Encoding.ASCII.GetBytes),
    ];

    private readonly Random _random;
    private readonly IReadOnlyList<(string Name, byte[] Bytes)> _seeds;

    /// <summary>Creates the fuzzer over <paramref name="seeds"/> with a fixed <paramref name="randomSeed"/>.</summary>
    public MutationFuzzer(IReadOnlyList<(string Name, byte[] Bytes)> seeds, int randomSeed)
    {
        _seeds = seeds;
        _random = new Random(randomSeed);
    }

    /// <summary>The next input.</summary>
    public byte[] Next()
    {
        var input = new List<byte>(_seeds[_random.Next(_seeds.Count)].Bytes);
        int mutations = _random.Next(1, 5);
        for (int i = 0; i < mutations && input.Count < MaxInputLength; i++)
        {
            Mutate(input);
        }

        return [.. input.Count > MaxInputLength ? input.GetRange(0, MaxInputLength) : input];
    }

    private void Mutate(List<byte> input)
    {
        int at = _random.Next(input.Count + 1);
        int inside = input.Count == 0 ? 0 : Math.Min(at, input.Count - 1);
        switch (_random.Next(7))
        {
            case 0 when input.Count > 0:
                input[inside] ^= (byte)(1 << _random.Next(8));
                break;
            case 1 when input.Count > 0:
                input[inside] = s_interestingBytes[_random.Next(s_interestingBytes.Length)];
                break;
            case 2:
                input.Insert(at, s_interestingBytes[_random.Next(s_interestingBytes.Length)]);
                break;
            case 3 when input.Count > 0:
                input.RemoveRange(inside, Math.Min(_random.Next(1, 9), input.Count - inside));
                break;
            case 4 when input.Count > 0:
                int length = Math.Min(_random.Next(1, 33), input.Count - inside);
                input.InsertRange(inside, input.GetRange(inside, length));
                break;
            case 5:
                input.InsertRange(at, s_fragments[_random.Next(s_fragments.Length)]);
                break;
            default:
                input.AddRange(_seeds[_random.Next(_seeds.Count)].Bytes);
                break;
        }
    }
}
