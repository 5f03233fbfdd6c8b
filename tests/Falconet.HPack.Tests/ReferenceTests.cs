using System;
using System.Collections.Generic;
using System.Linq;
using System.Text;
using Falconet.HPack.Tests.Support;
using Falconet.Http.Http2.HPack;
using Shouldly;

namespace Falconet.HPack.Tests;

/// <summary>
/// Falconet's decoder against Kestrel's, an implementation it shares no code with, on random blocks: valid ones written
/// with every representation (each checked against the fields it was built from, so the two cannot agree on a wrong
/// answer), and those blocks mutated, where both must fail or both deliver the same fields. Bounded and seeded.
/// </summary>
public sealed class ReferenceTests
{
    private const int BlockCount = 400;

    private static readonly string[] s_names =
    [
        ":path", ":authority", ":method", "accept", "accept-encoding", "user-agent", "cookie", "content-type", "from",
        "traceparent", "x-custom", "x-trace-id", "sec-fetch-mode", "priority", "cache-control",
    ];

    [Fact]
    public void Random_valid_blocks_decode_to_the_fields_they_were_built_from_on_both_decoders()
    {
        var random = new Random(7541);
        var model = new ModelTable(4096);
        using var falconet = new DecoderSession(maxHeaderListSize: 1 << 20, maxStringLength: 1 << 20);
        object kestrel = KestrelHPack.CreateDecoder(4096, 1 << 20);
        var kestrelFields = new List<string>();
        object kestrelHandler = KestrelHPack.CreateHandler<KestrelRecordingHandler>(kestrelFields);
        int evictions = 0;
        for (int block = 0; block < BlockCount; block++)
        {
            (byte[] bytes, List<string> expected) = RandomBlock(random, model, ref evictions);

            HPackDecodeResult result = falconet.Decode(bytes);
            kestrelFields.Clear();
            KestrelHPack.Decode(kestrel, bytes, kestrelHandler);
            if (result != HPackDecodeResult.Success || !falconet.Recording.Fields.SequenceEqual(expected) || !kestrelFields.SequenceEqual(expected)
                || falconet.Decoder.DynamicTableCount != model.Count || falconet.Decoder.DynamicTableSize != model.Size)
            {
                // The first difference, with Shouldly's full report.
                result.ShouldBe(HPackDecodeResult.Success, "block " + block + ": " + Hex.Text(bytes));
                falconet.Recording.Fields.ShouldBe(expected, "block " + block);
                kestrelFields.ShouldBe(expected, "Kestrel, block " + block);
                falconet.Decoder.DynamicTableCount.ShouldBe(model.Count);
                falconet.Decoder.DynamicTableSize.ShouldBe(model.Size);
            }
        }

        evictions.ShouldBeGreaterThan(10, "the blocks should have filled the table past its size");
    }

    [Fact]
    public void Mutated_blocks_fail_on_both_decoders_or_deliver_the_same_fields_on_both()
    {
        var random = new Random(9113);
        int agreedErrors = 0;
        int agreedSuccesses = 0;
        var disagreements = new List<string>();
        for (int round = 0; round < 1500; round++)
        {
            var model = new ModelTable(4096);
            int evictions = 0;
            (byte[] bytes, _) = RandomBlock(random, model, ref evictions);
            Mutate(random, ref bytes);

            using var falconet = new DecoderSession(maxHeaderListSize: 1 << 20, maxStringLength: 1 << 20);
            HPackDecodeResult result = falconet.Decode(bytes);
            var kestrelFields = new List<string>();
            string? kestrelError = null;
            try
            {
                KestrelHPack.Decode(KestrelHPack.CreateDecoder(4096, 1 << 20), bytes, KestrelHPack.CreateHandler<KestrelRecordingHandler>(kestrelFields));
            }
            catch (Exception exception)
            {
                // Kestrel reports every decoding error as its HPackDecodingException; anything else would be a crash.
                exception.GetType().Name.ShouldBe("HPackDecodingException", Hex.Text(bytes) + "\n" + exception);
                kestrelError = exception.Message;
            }

            // Checked without Shouldly in the loop (its assertions cost milliseconds each), then reported together.
            bool agreed;
            if (result == HPackDecodeResult.Success)
            {
                agreed = kestrelError is null && kestrelFields.SequenceEqual(falconet.Recording.Fields);
                agreedSuccesses++;
            }
            else if (result.IsCompressionError())
            {
                agreed = kestrelError is not null;
                agreedErrors++;
            }
            else
            {
                // Malformed fields (an upper-case name, a control character): Kestrel's decoder leaves those checks to its
                // stream, so it decodes the block.
                agreed = result == HPackDecodeResult.MalformedField && kestrelError is null;
            }

            if (!agreed)
            {
                disagreements.Add("block " + Hex.Text(bytes) + ": Falconet " + result + ", Kestrel " + (kestrelError ?? "success"));
            }
        }

        disagreements.ShouldBeEmpty();
        agreedErrors.ShouldBeGreaterThan(150);
        agreedSuccesses.ShouldBeGreaterThan(150);
    }

    // A block of 1 to 12 fields (and sometimes size updates first) using every representation, with the fields it holds.
    private static (byte[] Block, List<string> Fields) RandomBlock(Random random, ModelTable model, ref int evictions)
    {
        var builder = new BlockBuilder();
        var fields = new List<string>();
        if (random.Next(10) == 0)
        {
            int size = random.Next(10) == 0 ? 0 : random.Next(256, 4097);
            builder.SizeUpdate(size);
            evictions += model.SetMaxSize(size);
            if (random.Next(2) == 0)
            {
                builder.SizeUpdate(4096);
                model.SetMaxSize(4096);
            }
        }

        int count = random.Next(1, 13);
        for (int i = 0; i < count; i++)
        {
            bool huffman = random.Next(3) != 0;
            int kind = random.Next(6);
            if (kind == 0)
            {
                int index = random.Next(1, 62);
                builder.Indexed(index);
                fields.Add(StaticField(index));
            }
            else if (kind == 1 && model.Count > 0)
            {
                int dynamic = random.Next(1, model.Count + 1);
                builder.Indexed(61 + dynamic);
                fields.Add(model[dynamic].Name + ": " + model[dynamic].Value);
            }
            else
            {
                string value = RandomValue(random);
                bool indexing = random.Next(2) == 0;
                string name;
                int nameKind = random.Next(3);
                if (nameKind == 0)
                {
                    int index = random.Next(1, 62);
                    name = Encoding.Latin1.GetString(HPackStaticTable.GetName(index));
                    builder.Literal(index, value, indexing, huffman);
                }
                else if (nameKind == 1 && model.Count > 0)
                {
                    int dynamic = random.Next(1, model.Count + 1);
                    name = model[dynamic].Name;
                    builder.Literal(61 + dynamic, value, indexing, huffman);
                }
                else
                {
                    name = s_names[random.Next(s_names.Length)];
                    builder.Literal(name, value, indexing, huffman);
                }

                fields.Add(name + ": " + value);
                if (indexing)
                {
                    evictions += model.Insert(name, value);
                }
            }
        }

        return (builder.ToArray(), fields);
    }

    private static string StaticField(int index) =>
        Encoding.Latin1.GetString(HPackStaticTable.GetName(index)) + ": " + Encoding.Latin1.GetString(HPackStaticTable.GetValue(index));

    // Visible ASCII with inner spaces and some obs-text; now and then long enough to evict much of the table.
    private static string RandomValue(Random random)
    {
        int length = random.Next(20) == 0 ? random.Next(500, 3000) : random.Next(0, 60);
        var chars = new char[length];
        for (int i = 0; i < length; i++)
        {
            int pick = random.Next(100);
            chars[i] = pick < 90 ? (char)random.Next(0x21, 0x7F) : pick < 97 ? ' ' : (char)random.Next(0x80, 0x100);
        }

        if (length > 0)
        {
            chars[0] = (char)random.Next(0x21, 0x7F);
            chars[^1] = (char)random.Next(0x21, 0x7F);
        }

        return new string(chars);
    }

    private static void Mutate(Random random, ref byte[] bytes)
    {
        switch (random.Next(4))
        {
            case 0:
                bytes[random.Next(bytes.Length)] ^= (byte)(1 << random.Next(8));
                break;
            case 1:
                bytes[random.Next(bytes.Length)] = (byte)random.Next(256);
                break;
            case 2:
                bytes = bytes.AsSpan(0, random.Next(bytes.Length)).ToArray();
                break;
            default:
                int at = random.Next(bytes.Length + 1);
                bytes = [.. bytes.AsSpan(0, at), (byte)random.Next(256), .. bytes.AsSpan(at)];
                break;
        }
    }

    /// <summary>The dynamic table as RFC 7541 defines it, kept by the test to know what each index holds.</summary>
    private sealed class ModelTable(int maxSize)
    {
        private readonly List<(string Name, string Value)> _entries = new();
        private int _maxSize = maxSize;

        public int Count => _entries.Count;

        public int Size => _entries.Sum(static e => Length(e.Name) + Length(e.Value) + 32);

        public (string Name, string Value) this[int index] => _entries[index - 1];

        public int SetMaxSize(int size)
        {
            _maxSize = size;
            return Evict(size);
        }

        public int Insert(string name, string value)
        {
            int size = Length(name) + Length(value) + 32;
            if (size > _maxSize)
            {
                int all = _entries.Count;
                _entries.Clear();
                return all;
            }

            int evicted = Evict(_maxSize - size);
            _entries.Insert(0, (name, value));
            return evicted;
        }

        private int Evict(int size)
        {
            int evicted = 0;
            while (Size > size)
            {
                _entries.RemoveAt(_entries.Count - 1);
                evicted++;
            }

            return evicted;
        }

        private static int Length(string text) => Encoding.Latin1.GetByteCount(text);
    }
}
