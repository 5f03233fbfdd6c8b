using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Text;
using BenchmarkDotNet.Attributes;
using Falconet.Http.Http2.HPack;

namespace Falconet.Benchmarks.Parsing;

/// <summary>
/// The Huffman strings of a browser's request (every value of the Chromium navigation the decoder comparison uses)
/// decoded three ways: Falconet's generated table of 12-bit windows (up to two symbols a lookup), a 4-bit state machine
/// (as nginx, h2o and nghttp2 decode: a transition table of 256 states by 16 nibbles, two lookups a byte, built here from
/// the same generated codes), and Kestrel's own <c>Huffman.Decode</c> (a tree of 8-bit tables).
/// </summary>
[MemoryDiagnoser]
public class HuffmanDecodeComparison
{
    private readonly byte[][] _strings = EncodeAll(
    [
        "www.example.com", "/articles/hpack-in-practice?ref=home",
        "\"Chromium\";v=\"131\", \"Not_A Brand\";v=\"24\", \"Google Chrome\";v=\"131\"", "?0", "\"Linux\"",
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
        "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7",
        "same-origin", "navigate", "?1", "document", "https://www.example.com/", "gzip, deflate, br, zstd", "en-US,en;q=0.9",
        "session=8f14e45fceea167a5a36dedd4bea2543; theme=dark", "u=0, i",
    ]);

    private readonly byte[] _output = new byte[1024];
    private byte[] _kestrelOutput = new byte[1024];
    private FourBitMachine _machine = null!;

    /// <summary>Builds the 4-bit machine and checks that every variant decodes every string alike.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _machine = FourBitMachine.Build();
        int window = Window();
        if (window != FourBit() || window != Kestrel())
        {
            throw new InvalidOperationException("The Huffman decoders disagree.");
        }
    }

    /// <summary>Kestrel's decoder.</summary>
    [Benchmark(Baseline = true)]
    public int Kestrel()
    {
        int total = 0;
        foreach (byte[] encoded in _strings)
        {
            total += KestrelDecode(null, encoded, ref _kestrelOutput);
        }

        return total;
    }

    /// <summary>Falconet's 12-bit windows.</summary>
    [Benchmark]
    public int Window()
    {
        int total = 0;
        foreach (byte[] encoded in _strings)
        {
            total += HuffmanCodec.Decode(encoded, _output);
        }

        return total;
    }

    /// <summary>A 4-bit state machine over the same code.</summary>
    [Benchmark]
    public int FourBit()
    {
        int total = 0;
        foreach (byte[] encoded in _strings)
        {
            total += _machine.Decode(encoded, _output);
        }

        return total;
    }

    [UnsafeAccessor(UnsafeAccessorKind.StaticMethod, Name = "Decode")]
    private static extern int KestrelDecode([UnsafeAccessorType("System.Net.Http.HPack.Huffman, Microsoft.AspNetCore.Server.Kestrel.Core")] object? huffman,
        ReadOnlySpan<byte> source, ref byte[] destination);

    private static byte[][] EncodeAll(string[] values)
    {
        var encoded = new List<byte[]>();
        foreach (string value in values)
        {
            byte[] bytes = Encoding.ASCII.GetBytes(value);
            var huffman = new byte[HuffmanCodec.GetEncodedLength(bytes)];
            HuffmanCodec.Encode(bytes, huffman);
            encoded.Add(huffman);
        }

        return [.. encoded];
    }

    /// <summary>
    /// A 4-bit Huffman state machine: one state per internal node of the code tree; for each state and nibble, the state
    /// after those 4 bits, the symbol completed on the way (at most one: codes have 5 bits or more), whether EOS was
    /// reached, and whether the state may end a string (a path of at most 7 ones: valid padding).
    /// </summary>
    private sealed class FourBitMachine
    {
        private const ushort Emit = 0x100;
        private const ushort Fail = 0x200;
        private const ushort Accept = 0x400;

        // Per transition: the next state in the low byte of Next, the symbol and flags in Output.
        private readonly byte[] _next;
        private readonly ushort[] _output;

        private FourBitMachine(byte[] next, ushort[] output)
        {
            _next = next;
            _output = output;
        }

        public static FourBitMachine Build()
        {
            // The tree: children of node n at [2n] and [2n + 1]; a leaf is ~symbol.
            var children = new List<int> { 0, 0 };
            ReadOnlySpan<ulong> codes = HPackHuffman.Codes;
            for (int symbol = 0; symbol < codes.Length; symbol++)
            {
                uint code = (uint)(codes[symbol] >> 8);
                int bits = (int)(codes[symbol] & 0xFF);
                int node = 0;
                for (int i = bits - 1; i >= 0; i--)
                {
                    int slot = (2 * node) + (int)((code >> i) & 1);
                    if (i == 0)
                    {
                        children[slot] = ~symbol;
                    }
                    else
                    {
                        if (children[slot] == 0)
                        {
                            children[slot] = children.Count / 2;
                            children.Add(0);
                            children.Add(0);
                        }

                        node = children[slot];
                    }
                }
            }

            int states = children.Count / 2;
            var accepting = new bool[states];
            var depthOnes = new int[states];
            accepting[0] = true;
            for (int node = 0; node < states; node++)
            {
                int one = children[(2 * node) + 1];
                if (one > 0 && accepting[node] && depthOnes[node] < 7)
                {
                    accepting[one] = true;
                    depthOnes[one] = depthOnes[node] + 1;
                }
            }

            var next = new byte[states * 16];
            var output = new ushort[states * 16];
            for (int state = 0; state < states; state++)
            {
                for (int nibble = 0; nibble < 16; nibble++)
                {
                    int node = state;
                    ushort result = 0;
                    for (int i = 3; i >= 0; i--)
                    {
                        int child = children[(2 * node) + ((nibble >> i) & 1)];
                        if (child < 0)
                        {
                            int symbol = ~child;
                            if (symbol == 256)
                            {
                                result = Fail;
                                break;
                            }

                            result = (ushort)(Emit | symbol);
                            node = 0;
                        }
                        else
                        {
                            node = child;
                        }
                    }

                    next[(state * 16) + nibble] = (byte)node;
                    output[(state * 16) + nibble] = (ushort)(result | ((result & Fail) == 0 && accepting[node] ? Accept : 0));
                }
            }

            return new FourBitMachine(next, output);
        }

        public int Decode(ReadOnlySpan<byte> source, Span<byte> destination)
        {
            int state = 0;
            int written = 0;
            ushort last = Accept;
            foreach (byte b in source)
            {
                int index = (state * 16) + (b >> 4);
                last = _output[index];
                state = _next[index];
                if ((last & (Emit | Fail)) != 0)
                {
                    if ((last & Fail) != 0)
                    {
                        return -1;
                    }

                    destination[written++] = (byte)last;
                }

                index = (state * 16) + (b & 0xF);
                last = _output[index];
                state = _next[index];
                if ((last & (Emit | Fail)) != 0)
                {
                    if ((last & Fail) != 0)
                    {
                        return -1;
                    }

                    destination[written++] = (byte)last;
                }
            }

            return (last & Accept) != 0 ? written : -1;
        }
    }
}
