using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text.Json;

namespace Falconet.Generator.Schema;

// The "hpack" section: the HPACK static table (RFC 7541 Appendix A) and Huffman code (Appendix B) as data, checked
// entry by entry where they are read so that every problem points at its line. Only the default schema has one.
internal static partial class SchemaReader
{
    /// <summary>Entries of the HPACK static table (RFC 7541 Appendix A).</summary>
    public const int StaticTableCount = 61;

    /// <summary>Symbols of the HPACK Huffman code: the 256 octets and EOS (RFC 7541 Appendix B).</summary>
    public const int HuffmanSymbolCount = 257;

    /// <summary>The symbol that ends a Huffman string and may never appear in one.</summary>
    public const int EndOfString = 256;

    /// <summary>The longest code a decoder table holds; RFC 7541's longest is EOS with 30 bits.</summary>
    public const int MaxHuffmanBits = 30;

    /// <summary>The pseudo-headers of RFC 9113 section 8.3 and RFC 8441, in the order of the runtime's <c>PseudoHeader</c> values (from 1).</summary>
    public static readonly string[] PseudoHeaders = { ":authority", ":method", ":path", ":scheme", ":status", ":protocol" };

    private static HPackSection ReadHPack(ref Utf8JsonReader reader, ReadContext context, LocationInfo propertyLocation)
    {
        if (reader.TokenType != JsonTokenType.StartObject)
        {
            context.Report(DiagnosticDescriptors.WrongValueType, Locate(ref reader, context), "'hpack'", "an object", Describe(reader.TokenType));
            reader.Skip();
            return new HPackSection(propertyLocation, null);
        }

        LocationInfo objectLocation = Locate(ref reader, context);
        int errorsBefore = context.ErrorCount;
        List<HPackStaticEntry>? staticTable = null;
        List<HuffmanCode>? huffman = null;
        var seen = new HashSet<string>(StringComparer.Ordinal);
        while (NextProperty(ref reader, context, seen, "'hpack'", out string property) is { } location)
        {
            switch (property)
            {
                case "staticTable":
                    staticTable = ReadStaticTable(ref reader, context);
                    break;
                case "huffman":
                    huffman = ReadHuffman(ref reader, context);
                    break;
                default:
                    context.Report(DiagnosticDescriptors.UnknownProperty, location, property, "'hpack'");
                    reader.Skip();
                    break;
            }
        }

        if (staticTable is null)
        {
            context.Report(DiagnosticDescriptors.HPackStaticTableInvalid, objectLocation, "is missing: 'hpack' needs a 'staticTable' array");
        }

        if (huffman is null)
        {
            context.Report(DiagnosticDescriptors.HuffmanTableInvalid, objectLocation, "is missing: 'hpack' needs a 'huffman' array");
        }

        HPackModel? model = context.ErrorCount == errorsBefore && staticTable is not null && huffman is not null
            ? new HPackModel(EquatableArray.From(staticTable), EquatableArray.From(huffman))
            : null;
        return new HPackSection(propertyLocation, model);
    }

    private static List<HPackStaticEntry>? ReadStaticTable(ref Utf8JsonReader reader, ReadContext context)
    {
        LocationInfo arrayLocation = Locate(ref reader, context);
        if (reader.TokenType != JsonTokenType.StartArray)
        {
            context.Report(DiagnosticDescriptors.WrongValueType, arrayLocation, "'staticTable'", "an array", Describe(reader.TokenType));
            reader.Skip();
            return null;
        }

        var entries = new List<HPackStaticEntry>();
        var first = new Dictionary<HPackStaticEntry, int>();
        while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
        {
            int position = entries.Count + 1;
            LocationInfo entryLocation = Locate(ref reader, context);
            if (reader.TokenType != JsonTokenType.StartObject)
            {
                context.Report(DiagnosticDescriptors.WrongValueType, entryLocation, "A static table entry", "an object", Describe(reader.TokenType));
                reader.Skip();
                entries.Add(new HPackStaticEntry(string.Empty, string.Empty));
                continue;
            }

            int? index = null;
            LocationInfo indexLocation = entryLocation;
            string? name = null;
            LocationInfo nameLocation = entryLocation;
            string value = string.Empty;
            LocationInfo valueLocation = entryLocation;
            var seen = new HashSet<string>(StringComparer.Ordinal);
            while (NextProperty(ref reader, context, seen, "a static table entry", out string property) is { } propertyLocation)
            {
                switch (property)
                {
                    case "index":
                        indexLocation = Locate(ref reader, context);
                        index = ReadInteger(ref reader, context, "'index'");
                        break;
                    case "name":
                        if (ExpectString(ref reader, context, "'name'"))
                        {
                            nameLocation = Locate(ref reader, context);
                            name = reader.GetString()!;
                        }

                        break;
                    case "value":
                        if (ExpectString(ref reader, context, "'value'"))
                        {
                            valueLocation = Locate(ref reader, context);
                            value = reader.GetString()!;
                        }

                        break;
                    default:
                        context.Report(DiagnosticDescriptors.UnknownProperty, propertyLocation, property, "a static table entry");
                        reader.Skip();
                        break;
                }
            }

            if (index is null)
            {
                context.Report(DiagnosticDescriptors.HPackStaticTableInvalid, entryLocation, "entry " + Int(position) + " has no 'index'");
            }
            else if (index != position)
            {
                context.Report(DiagnosticDescriptors.HPackStaticTableInvalid, indexLocation,
                    "entry " + Int(position) + " has index " + Int(index.Value) + ": entries are listed in order, from 1");
            }

            if (name is null)
            {
                context.Report(DiagnosticDescriptors.HPackStaticTableInvalid, entryLocation, "entry " + Int(position) + " has no 'name'");
                name = string.Empty;
            }
            else if (StaticNameProblem(name) is { } problem)
            {
                context.Report(DiagnosticDescriptors.HPackStaticNameInvalid, nameLocation, name, problem);
            }

            if (value.Length > 0 && ValueProblem(value) is { } valueProblem)
            {
                context.Report(DiagnosticDescriptors.HPackStaticTableInvalid, valueLocation, "value '" + value + "' of entry " + Int(position) + " " + valueProblem);
            }

            var entry = new HPackStaticEntry(name, value);
            if (name.Length > 0 && first.TryGetValue(entry, out int earlier))
            {
                context.Report(DiagnosticDescriptors.HPackStaticTableInvalid, nameLocation, "entry " + Int(position) + " repeats entry " + Int(earlier));
            }
            else
            {
                first[entry] = position;
            }

            entries.Add(entry);
        }

        if (entries.Count != StaticTableCount)
        {
            context.Report(DiagnosticDescriptors.HPackStaticTableInvalid, arrayLocation,
                "has " + Int(entries.Count) + " entries; RFC 7541 Appendix A defines " + Int(StaticTableCount));
        }

        return entries;
    }

    private static List<HuffmanCode>? ReadHuffman(ref Utf8JsonReader reader, ReadContext context)
    {
        LocationInfo arrayLocation = Locate(ref reader, context);
        if (reader.TokenType != JsonTokenType.StartArray)
        {
            context.Report(DiagnosticDescriptors.WrongValueType, arrayLocation, "'huffman'", "an array", Describe(reader.TokenType));
            reader.Skip();
            return null;
        }

        var codes = new List<HuffmanCode>();
        var locations = new List<LocationInfo>();
        bool usable = true;
        while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
        {
            int position = codes.Count;
            LocationInfo entryLocation = Locate(ref reader, context);
            locations.Add(entryLocation);
            if (reader.TokenType != JsonTokenType.StartObject)
            {
                context.Report(DiagnosticDescriptors.WrongValueType, entryLocation, "A Huffman code entry", "an object", Describe(reader.TokenType));
                reader.Skip();
                codes.Add(new HuffmanCode(0, 0));
                usable = false;
                continue;
            }

            int? symbol = null;
            LocationInfo symbolLocation = entryLocation;
            string? code = null;
            LocationInfo codeLocation = entryLocation;
            int? bits = null;
            LocationInfo bitsLocation = entryLocation;
            var seen = new HashSet<string>(StringComparer.Ordinal);
            while (NextProperty(ref reader, context, seen, "a Huffman code entry", out string property) is { } propertyLocation)
            {
                switch (property)
                {
                    case "symbol":
                        symbolLocation = Locate(ref reader, context);
                        symbol = ReadInteger(ref reader, context, "'symbol'");
                        break;
                    case "code":
                        if (ExpectString(ref reader, context, "'code'"))
                        {
                            codeLocation = Locate(ref reader, context);
                            code = reader.GetString()!;
                        }

                        break;
                    case "bits":
                        bitsLocation = Locate(ref reader, context);
                        bits = ReadInteger(ref reader, context, "'bits'");
                        break;
                    default:
                        context.Report(DiagnosticDescriptors.UnknownProperty, propertyLocation, property, "a Huffman code entry");
                        reader.Skip();
                        break;
                }
            }

            if (symbol is null)
            {
                context.Report(DiagnosticDescriptors.HuffmanTableInvalid, entryLocation, "entry " + Int(position) + " has no 'symbol'");
            }
            else if (symbol != position)
            {
                context.Report(DiagnosticDescriptors.HuffmanTableInvalid, symbolLocation,
                    "entry " + Int(position) + " is for symbol " + Int(symbol.Value) + ": symbols are listed in order, from 0 to 256 (EOS)");
            }

            uint value = 0;
            if (code is null || bits is null)
            {
                context.Report(DiagnosticDescriptors.HuffmanTableInvalid, entryLocation, "entry " + Int(position) + " needs a 'code' and its 'bits'");
                usable = false;
            }
            else if (!TryParseHex(code, out value))
            {
                context.Report(DiagnosticDescriptors.HuffmanCodeInvalid, codeLocation, Symbol(position), "'" + code + "' is not a hexadecimal number such as \"0x1ff8\"");
                usable = false;
            }
            else if (bits < 1 || bits > MaxHuffmanBits)
            {
                context.Report(DiagnosticDescriptors.HuffmanCodeInvalid, bitsLocation, Symbol(position), "has " + Int(bits.Value) + " bits; a code has 1 to " + Int(MaxHuffmanBits));
                usable = false;
            }
            else if (bits < 32 && value >> bits.Value != 0)
            {
                context.Report(DiagnosticDescriptors.HuffmanCodeInvalid, codeLocation, Symbol(position), code + " does not fit in " + Int(bits.Value) + " bits");
                usable = false;
            }

            codes.Add(new HuffmanCode(value, bits ?? 0));
        }

        if (codes.Count != HuffmanSymbolCount)
        {
            context.Report(DiagnosticDescriptors.HuffmanTableInvalid, arrayLocation,
                "has " + Int(codes.Count) + " entries; RFC 7541 Appendix B defines " + Int(HuffmanSymbolCount) + " (the 256 octets and EOS)");
        }
        else if (usable)
        {
            CheckPrefixCode(codes, locations, arrayLocation, context);
        }

        return codes;
    }

    // A decoder needs every code to be a prefix of no other, every bit sequence to start with a code (Kraft sum 1, so
    // no input leaves the decoder without an answer), and EOS to be all ones: padding is checked as EOS's leading bits.
    private static void CheckPrefixCode(List<HuffmanCode> codes, List<LocationInfo> locations, LocationInfo arrayLocation, ReadContext context)
    {
        var order = new List<int>(codes.Count);
        for (int i = 0; i < codes.Count; i++)
        {
            order.Add(i);
        }

        order.Sort((a, b) => string.CompareOrdinal(Bits(codes[a]), Bits(codes[b])));
        bool prefixFree = true;
        for (int i = 1; i < order.Count; i++)
        {
            string shorter = Bits(codes[order[i - 1]]);
            string longer = Bits(codes[order[i]]);
            if (longer.StartsWith(shorter, StringComparison.Ordinal))
            {
                int reported = Math.Max(order[i - 1], order[i]);
                int other = Math.Min(order[i - 1], order[i]);
                string relation = shorter.Length == longer.Length
                    ? "is the code of symbol " + Int(other) + " too"
                    : reported == order[i] ? "starts with the code of symbol " + Int(other) : "is a prefix of the code of symbol " + Int(other);
                context.Report(DiagnosticDescriptors.HuffmanCodeInvalid, locations[reported], Symbol(reported), Bits(codes[reported]) + " " + relation + ": not a prefix code");
                prefixFree = false;
            }
        }

        if (!prefixFree)
        {
            return;
        }

        // The Kraft sum in units of 2^-30: exactly 2^30 when the code is complete.
        long sum = 0;
        foreach (HuffmanCode code in codes)
        {
            sum += 1L << (MaxHuffmanBits - code.Bits);
        }

        if (sum != 1L << MaxHuffmanBits)
        {
            context.Report(DiagnosticDescriptors.HuffmanCodeInvalid, arrayLocation, "The HPACK Huffman code", "leaves bit sequences that start no code: the codes are not complete (their Kraft sum is not 1)");
        }

        HuffmanCode eos = codes[EndOfString];
        if (eos.Code != (eos.Bits == 32 ? uint.MaxValue : (1u << eos.Bits) - 1) || eos.Bits < 8)
        {
            context.Report(DiagnosticDescriptors.HuffmanCodeInvalid, locations[EndOfString], Symbol(EndOfString),
                "must be all ones and at least 8 bits long: padding is checked as the leading bits of EOS (RFC 7541 section 5.2)");
        }
    }

    // RFC 9113 section 8.2.1: field names are lower case; a pseudo-header's name is a colon and a lower-case token.
    private static string? StaticNameProblem(string name)
    {
        if (name.Length > 0 && name[0] == ':')
        {
            return Array.IndexOf(PseudoHeaders, name) >= 0 ? null : "is not a pseudo-header of RFC 9113 (" + string.Join(", ", PseudoHeaders) + ")";
        }

        string token = name;
        if (token.Length == 0)
        {
            return "is empty";
        }

        foreach (char c in token)
        {
            if (c >= 'A' && c <= 'Z')
            {
                return "has the upper-case letter '" + c + "': HTTP/2 field names are lower case (RFC 9113 section 8.2.1)";
            }

            if (!HttpToken.IsTokenChar(c))
            {
                return "has the character '" + c + "', which is not allowed in a field name";
            }
        }

        return null;
    }

    private static int? ReadInteger(ref Utf8JsonReader reader, ReadContext context, string what)
    {
        if (reader.TokenType == JsonTokenType.Number && reader.TryGetInt32(out int value))
        {
            return value;
        }

        context.Report(DiagnosticDescriptors.WrongValueType, Locate(ref reader, context), what, "an integer", Describe(reader.TokenType));
        reader.Skip();
        return null;
    }

    private static bool TryParseHex(string text, out uint value)
    {
        value = 0;
        return text.Length > 2 && text.Length <= 10 && text.StartsWith("0x", StringComparison.OrdinalIgnoreCase)
            && uint.TryParse(text.Substring(2), NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out value);
    }

    /// <summary>The code as a string of '0' and '1', most significant bit first.</summary>
    internal static string Bits(HuffmanCode code)
    {
        var text = new char[code.Bits];
        for (int i = 0; i < code.Bits; i++)
        {
            text[i] = ((code.Code >> (code.Bits - 1 - i)) & 1) != 0 ? '1' : '0';
        }

        return new string(text);
    }

    private static string Symbol(int symbol) => (symbol == EndOfString ? "EOS (256)" : "Symbol " + Int(symbol)) + " of the HPACK Huffman code";

    private static string Int(int value) => value.ToString(CultureInfo.InvariantCulture);
}
