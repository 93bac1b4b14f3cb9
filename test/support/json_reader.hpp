/**
 *  @file   json_reader.hpp
 *  @brief  A small JSON reader for tests: enough to read the fixtures' `expected.json` oracles.
 *
 *  Why a reader in the test and not a CMake pre-conversion: `expected.json` is the independent oracle, written by
 *  a script that never saw our library; reading it as is keeps every derived fact in one visible place (the test),
 *  with no generated intermediate that could drift. Integers stay exact (`std::int64_t`: node RAM reaches 10^12),
 *  other numbers become `double`. Strings keep `\uXXXX` escapes below 0x80 only (the fixtures hold ASCII).
 *  Malformed input throws `std::runtime_error`, which fails the test that read it.
 */
#pragma once
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace forkunion::testing {

struct json_t {
    enum class kind_t { null_k, boolean_k, integer_k, real_k, string_k, array_k, object_k };
    kind_t kind = kind_t::null_k;
    bool boolean = false;
    std::int64_t integer = 0;
    double real = 0;
    std::string string;
    std::vector<json_t> array;
    std::map<std::string, json_t> object;

    bool is_null() const { return kind == kind_t::null_k; }
    bool has(std::string const &key) const { return kind == kind_t::object_k && object.count(key) != 0; }
    json_t const &operator[](std::string const &key) const {
        auto found = object.find(key);
        if (kind != kind_t::object_k || found == object.end()) throw std::runtime_error("json: no key " + key);
        return found->second;
    }
    json_t const &operator[](std::size_t index) const {
        if (kind != kind_t::array_k || index >= array.size()) throw std::runtime_error("json: bad index");
        return array[index];
    }
    std::int64_t as_integer() const {
        if (kind != kind_t::integer_k) throw std::runtime_error("json: not an integer");
        return integer;
    }
    std::string const &as_string() const {
        if (kind != kind_t::string_k) throw std::runtime_error("json: not a string");
        return string;
    }
};

class json_parser_t {
    std::string const &text_;
    std::size_t position_ = 0;

    [[noreturn]] void fail(char const *what) const {
        throw std::runtime_error(std::string("json: ") + what + " at byte " + std::to_string(position_));
    }
    void skip_blanks() {
        while (position_ < text_.size() && std::string(" \t\r\n").find(text_[position_]) != std::string::npos)
            ++position_;
    }
    char peek() {
        skip_blanks();
        if (position_ >= text_.size()) fail("unexpected end");
        return text_[position_];
    }
    void expect(char c) {
        if (peek() != c) fail("unexpected character");
        ++position_;
    }
    bool consume(std::string const &word) {
        if (text_.compare(position_, word.size(), word) != 0) return false;
        position_ += word.size();
        return true;
    }
    std::string parse_string() {
        expect('"');
        std::string result;
        while (position_ < text_.size() && text_[position_] != '"') {
            char c = text_[position_++];
            if (c == '\\') {
                if (position_ >= text_.size()) fail("bad escape");
                char e = text_[position_++];
                switch (e) {
                case 'n':
                    result += '\n';
                    break;
                case 't':
                    result += '\t';
                    break;
                case 'r':
                    result += '\r';
                    break;
                case 'b':
                    result += '\b';
                    break;
                case 'f':
                    result += '\f';
                    break;
                case 'u': {
                    if (position_ + 4 > text_.size()) fail("bad \\u");
                    unsigned long code = std::stoul(text_.substr(position_, 4), nullptr, 16);
                    position_ += 4;
                    result += code < 0x80 ? static_cast<char>(code) : '?';
                    break;
                }
                default:
                    result += e;
                }
            } else
                result += c;
        }
        expect('"');
        return result;
    }

public:
    explicit json_parser_t(std::string const &text) : text_(text) {}

    json_t parse_value() {
        json_t value;
        char const c = peek();
        if (c == '{') {
            value.kind = json_t::kind_t::object_k;
            ++position_;
            if (peek() == '}') return ++position_, value;
            for (;;) {
                std::string key = parse_string();
                expect(':');
                value.object[key] = parse_value();
                if (peek() == ',')
                    ++position_;
                else
                    break;
            }
            expect('}');
        } else if (c == '[') {
            value.kind = json_t::kind_t::array_k;
            ++position_;
            if (peek() == ']') return ++position_, value;
            for (;;) {
                value.array.push_back(parse_value());
                if (peek() == ',')
                    ++position_;
                else
                    break;
            }
            expect(']');
        } else if (c == '"') {
            value.kind = json_t::kind_t::string_k;
            value.string = parse_string();
        } else if (consume("null"))
            value.kind = json_t::kind_t::null_k;
        else if (consume("true"))
            value.kind = json_t::kind_t::boolean_k, value.boolean = true;
        else if (consume("false"))
            value.kind = json_t::kind_t::boolean_k, value.boolean = false;
        else {
            std::size_t const start = position_;
            while (position_ < text_.size() &&
                   std::string("+-0123456789.eE").find(text_[position_]) != std::string::npos)
                ++position_;
            std::string const number = text_.substr(start, position_ - start);
            if (number.empty()) fail("unexpected token");
            if (number.find_first_of(".eE") == std::string::npos)
                value.kind = json_t::kind_t::integer_k, value.integer = std::stoll(number);
            else
                value.kind = json_t::kind_t::real_k, value.real = std::stod(number);
        }
        return value;
    }

    json_t parse_document() {
        json_t value = parse_value();
        skip_blanks();
        if (position_ != text_.size()) fail("trailing bytes");
        return value;
    }
};

inline json_t read_json_file(std::string const &path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw std::runtime_error("json: cannot open " + path);
    std::stringstream buffer;
    buffer << file.rdbuf();
    std::string const text = buffer.str();
    return json_parser_t(text).parse_document();
}

} // namespace forkunion::testing
